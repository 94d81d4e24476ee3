/**
 * What a soak run records, and all the checker reads: every request as its
 * agent saw it and as the relay holds it at the end, every click and every
 * ephemeral notice, every request message's life in Slack, every callback
 * delivery, the resource samples of each relay process and the fault
 * windows. Plain data (times are Unix milliseconds of this machine's clock,
 * which the relays share), so a history can be written down by hand with a
 * violation planted in it (test/unit/bench/soak-checker.test.ts).
 */

export type SoakKind = "permission" | "step_gate" | "ask_user_question" | "interactive_questions";
/** How the agent learns the answer: a long-poll (the client library), a held Claude Code hook call, or a callback. */
export type Via = "long-poll" | "hook" | "callback";
export type EndedStatus = "answered" | "expired" | "cancelled" | "failed";

/** What an agent ended up with. */
export interface AgentOutcome {
  /** When the agent had it. */
  at: number;
  /**
   * The request's status as the agent learnt it; "lost" when its call broke
   * without an answer (a hook call on an instance that was SIGKILLed),
   * "refused" when a hook call was denied without asking anyone, "denied"
   * when a hook call was denied because nobody answered (the request
   * expired, was cancelled or failed).
   */
  status: EndedStatus | "lost" | "refused" | "denied";
  decision?: unknown;
  detail?: string;
}

/** The request as the relay holds it once the run is over. */
export interface FinalState {
  status: EndedStatus | "pending";
  decision?: unknown;
  answeredBy?: string;
  /** answeredAt when answered. */
  answeredAt?: number;
}

export interface SoakRequest {
  /** A unique string in the request's text, by which its Slack message is found. */
  marker: string;
  /** The relay's id, once known (create reply or posted message). */
  id?: string;
  kind: SoakKind;
  via: Via;
  token: string;
  createdAt: number;
  /** The promised end: expiresAt, or for a hook call its own timeout. */
  deadline: number;
  /** The one person who answers it (a Slack user id of its own), and the decision their answer must give; none: nobody answers. */
  person?: { user: string; expected: unknown };
  agent?: AgentOutcome;
  final?: FinalState;
}

export type ClickHow = "button" | "open" | "modal" | "thread";

/** One thing a person did in Slack for a request. */
export interface Click {
  marker: string;
  user: string;
  how: ClickHow;
  at: number;
  /** When Slack had the relay's reply (or gave up). */
  repliedAt: number;
  /** The HTTP status of the relay's reply, or 0 when the connection failed (Slack shows the person an error). */
  status: number;
  /** The reply kept a modal open with an error (the person sees it). */
  modalError?: boolean;
  /** For "open": the trigger id, to find the views.open it caused. */
  triggerId?: string;
}

export interface Notice {
  user: string;
  channel: string;
  text: string;
  at: number;
  /** Slack refused the call (a fault burst): the relay tried to tell. */
  refused: boolean;
}

/** One request message, from its post until it was updated to an ended state (no buttons left) or deleted. */
export interface MessageLife {
  requestId: string;
  channel: string;
  ts: string;
  postedAt: number;
  endedAt?: number;
}

export interface CallbackDelivery {
  requestId: string;
  at: number;
  signatureOk: boolean;
  status: string;
  decision?: unknown;
}

/** One reading of one relay process. */
export interface Sample {
  /** e.g. "a#2": instance a, its second process. */
  life: string;
  at: number;
  rssBytes: number;
  heapUsedBytes: number;
  fds: number;
}

/** The faults done, and "all-down": a time when no relay instance was up (a SIGKILL during a rolling restart). */
export type FaultKind = "slack-429" | "slack-5xx" | "redis-restart" | "sigkill" | "sigterm-roll" | "idle-proxy" | "all-down";

export interface FaultWindow {
  kind: FaultKind;
  from: number;
  to: number;
  detail?: string;
}

export interface SoakHistory {
  startedAt: number;
  endedAt: number;
  /** How late past its deadline a request may end (honest slack for a loaded machine). */
  graceMs: number;
  requests: SoakRequest[];
  clicks: Click[];
  notices: Notice[];
  /** views.open calls (refused ones included): trigger id and time. */
  opens: Array<{ triggerId: string; at: number }>;
  messages: MessageLife[];
  callbacks: CallbackDelivery[];
  samples: Sample[];
  faults: FaultWindow[];
}
