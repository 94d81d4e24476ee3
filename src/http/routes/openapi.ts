import type { HttpApp } from "../transport.js";
export function registerOpenApiRoute(_app: HttpApp): void {}
