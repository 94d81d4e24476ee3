/**
 * Slack's HTTP requests (POST /slack/events): Bolt's HTTPReceiver, minus its
 * second parse. HTTPReceiver turns the body into a string and parses it as a
 * form (to let `ssl_check` through unsigned), verifies the signature, then
 * turns the same bytes into a string and parses the form again for the
 * payload: about 20 KB of garbage a click (docs/performance.md). Bolt has no
 * option to keep the first parse, so this receiver is HTTPReceiver's request
 * handling written out once, from Bolt's own exported parts: the body read by
 * `bufferIncomingMessage` (raw-body, Bolt's limit), the signature checked by
 * `verifySlackRequest` (v0 HMAC-SHA256 of `v0:<timestamp>:<body>`, compared in
 * constant time, refused more than 5 minutes old), the ack by
 * `HTTPResponseAck` (written at once, `processBeforeResponse` off, and a 404
 * for a request no listener acks within 3 s), and the same answers: 413 over
 * the limit, 401 unverified, 400 malformed, 200 for `ssl_check`, the challenge
 * for `url_verification`, Bolt's error handler when a listener throws.
 * Routing is the relay's (src/http/routes/slack.ts sends only POST
 * /slack/events here); install and OAuth paths are not served (the relay has
 * one workspace and a fixed bot token).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse } from "node:querystring";
import { HTTPModuleFunctions as http, HTTPResponseAck, verifySlackRequest, type App, type Logger, type Receiver, type ReceiverEvent } from "@slack/bolt";

const FORM = "application/x-www-form-urlencoded";

export interface SlackHttpReceiverOptions {
  signingSecret: string;
  logger: Logger;
}

export class SlackHttpReceiver implements Receiver {
  private app: App | undefined;
  private readonly signingSecret: string;
  private readonly logger: Logger;

  constructor({ signingSecret, logger }: SlackHttpReceiverOptions) {
    this.signingSecret = signingSecret;
    this.logger = logger;
  }

  init(app: App): void {
    this.app = app;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  /** Handles one POST /slack/events; answers it itself. */
  readonly requestListener = (req: IncomingMessage, res: ServerResponse): void => {
    void this.handle(req, res);
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw: Buffer;
    try {
      ({ rawBody: raw } = await http.bufferIncomingMessage(req, http.defaultBodyLimit));
    } catch (error) {
      if (http.isRawBodyError(error) && (error.type === "entity.too.large" || error.statusCode === 413)) {
        this.logger.warn(`Request body exceeded the maximum allowed size (limit: ${String((error as { limit?: unknown }).limit)} bytes)`);
        return http.buildNoBodyResponse(res, 413);
      }
      this.logger.warn(`Failed to parse and verify the request data: ${(error as Error).message}`);
      return http.buildNoBodyResponse(res, 401);
    }
    const text = raw.toString();
    const form = req.headers["content-type"] === FORM ? parse(text) : undefined;
    // Slack's ssl_check is not signed; nothing else of the body is looked at.
    if (form?.ssl_check === "1") return http.buildSSLCheckResponse(res);
    try {
      verifySlackRequest({
        signingSecret: this.signingSecret,
        body: text,
        headers: {
          "x-slack-signature": http.getHeader(req, "x-slack-signature"),
          "x-slack-request-timestamp": Number(http.getHeader(req, "x-slack-request-timestamp")),
        },
        logger: this.logger,
      });
    } catch (error) {
      this.logger.warn(`Failed to parse and verify the request data: ${(error as Error).message}`);
      return http.buildNoBodyResponse(res, 401);
    }
    let body: Record<string, unknown>;
    try {
      body = (form ? (typeof form.payload === "string" ? JSON.parse(form.payload) : form) : JSON.parse(text)) as Record<string, unknown>;
    } catch (error) {
      this.logger.warn(`Malformed request body: ${(error as Error).message}`);
      return http.buildNoBodyResponse(res, 400);
    }
    if (body.ssl_check === "1") return http.buildSSLCheckResponse(res);
    if (body.type === "url_verification") return http.buildUrlVerificationResponse(res, body);
    const ack = new HTTPResponseAck({ logger: this.logger, processBeforeResponse: false, httpRequest: req, httpRequestBody: body, httpResponse: res });
    const event: ReceiverEvent = {
      body,
      ack: ack.bind(),
      retryNum: http.extractRetryNumFromHTTPRequest(req),
      retryReason: http.extractRetryReasonFromHTTPRequest(req),
    };
    try {
      await this.app?.processEvent(event);
    } catch (error) {
      const handled = await http.defaultProcessEventErrorHandler({
        error: error as Error,
        logger: this.logger,
        request: req,
        response: res,
        storedResponse: undefined,
      });
      if (handled) ack.ack();
    }
  }
}
