# syntax=docker/dockerfile:1
# Multi-stage build: compile TypeScript with dev dependencies in the build
# stage, then ship only the compiled relay and its production dependencies,
# running as the non-root `node` user. The image starts the bundled relay
# directly (what `npm start` runs once the build is current): nothing is
# compiled when a container starts.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied in.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY ui ./ui
RUN npm run build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json: "type": "module" for dist/; manifest.yml: the Slack app manifest, for reference.
COPY package.json manifest.yml ./
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Exec form: node is PID 1 and gets SIGTERM itself; the CLI turns it into a graceful shutdown.
# --heap-growing-percent=30: answering 10,000 held long-polls grows the heap by 30 %, not fourfold; --max-semi-space-size=16:
# the young generation Node 20 had, not Node 24's larger one (docs/performance.md "Heap growth"); neither is valid in NODE_OPTIONS.
CMD ["node", "--heap-growing-percent=30", "--max-semi-space-size=16", "dist/bundle/approval-relay.js", "serve"]
