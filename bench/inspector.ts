/** A client of a Node process's inspector (started with --inspect=127.0.0.1:<port>) over its WebSocket, for the bench's profiling tools. */
export class Inspector {
  private readonly listeners = new Map<string, (params: never) => void>();
  private next = 1;
  private readonly pending = new Map<number, (value: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: never; result?: unknown; error?: unknown };
      if (message.method !== undefined) this.listeners.get(message.method)?.(message.params!);
      if (message.id !== undefined) {
        this.pending.get(message.id)?.(message.error ? Promise.reject(new Error(JSON.stringify(message.error))) : message.result);
        this.pending.delete(message.id);
      }
    });
  }
  static async open(port: number): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const ws = new WebSocket(list[0]!.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve);
      ws.addEventListener("error", reject);
    });
    return new Inspector(ws);
  }
  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.pending.set(id, resolve as (value: unknown) => void)) as Promise<T>;
  }
  /** Calls `listener` with the params of each event named `method` (one listener a method). */
  on<P>(method: string, listener: (params: P) => void): void {
    this.listeners.set(method, listener as (params: never) => void);
  }
  close(): void {
    this.ws.close();
  }
}
