import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChannelQueue, queueKey } from "../../../src/slack/channel-queue.js";

beforeEach(() => {
  vi.useFakeTimers({ now: 0, toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Fake time: the queue sleeps on (faked) timers; `settle` runs them all. */
function clock() {
  const sleeps: number[] = [];
  return {
    now: () => Date.now(),
    sleep: (ms: number) => {
      sleeps.push(ms);
      return new Promise<void>((resolve) => setTimeout(resolve, ms));
    },
    sleeps,
  };
}

/** Takes a turn under `key` and releases it at once, as a call that takes no time; true when given. */
async function call(queue: ChannelQueue, key: string, deadline: number): Promise<boolean> {
  const turn = await queue.turn(key, deadline);
  turn?.release();
  return turn !== undefined;
}

/** Waits for every turn in `turns`, running the fake timers meanwhile. */
async function settle<T>(turns: Array<Promise<T>>): Promise<T[]> {
  const all = Promise.all(turns);
  await vi.runAllTimersAsync();
  return all;
}

const POSTS = queueKey("chat.postMessage", "C0ONE");

describe("pacing posts per channel", () => {
  it("lets a burst through at once, then one post a second, in the order they came", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 3 });
    const given: Array<[number, number]> = [];
    await settle(Array.from({ length: 6 }, (_, i) => call(queue, POSTS, 60_000).then((ok) => ok && given.push([i, c.now()]))));
    expect(given).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 1000],
      [4, 2000],
      [5, 3000],
    ]);
  });

  it("paces each channel on its own", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const other = queueKey("chat.postMessage", "C0TWO");
    await settle([call(queue, POSTS, 10_000), call(queue, POSTS, 10_000), call(queue, other, 10_000)]);
    expect(c.now()).toBe(1000);
    expect(c.sleeps).toEqual([1000]);
  });

  it("leaves other methods unpaced", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const turns = await settle(Array.from({ length: 20 }, () => call(queue, "chat.update", 10_000)));
    expect(turns.every(Boolean)).toBe(true);
    expect(c.now()).toBe(0);
  });

  it("a turn that would come after the caller's deadline is not given, and uses no token", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const results = await settle([call(queue, POSTS, 10_000), call(queue, POSTS, 500), call(queue, POSTS, 10_000)]);
    expect(results).toEqual([true, false, true]);
    expect(c.now()).toBe(1000);
  });

  it("a turn released unused gives its token back to the next caller at once", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    (await queue.turn(POSTS, 10_000))!.release(false);
    expect(await call(queue, POSTS, 10_000)).toBe(true);
    expect(c.now()).toBe(0);
  });

  it("one call at a time per key: the next caller waits until the one ahead releases the line", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 10, postBurst: 3 });
    const first = (await queue.turn(POSTS, 10_000))!;
    let second = false;
    const next = call(queue, POSTS, 10_000).then(() => (second = true));
    await vi.advanceTimersByTimeAsync(5000);
    expect(second).toBe(false);
    first.release();
    await next;
    expect(second).toBe(true);
  });
});

describe("forgetting channels", () => {
  it("a channel posted to once is forgotten once its bucket is full again, as new lines come", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    const first = Array.from({ length: 50 }, (_, i) => queueKey("chat.postMessage", `C0A${i}`));
    await settle(first.map((key) => call(queue, key, 10_000)));
    expect(queue.lineCount).toBe(50);
    await vi.advanceTimersByTimeAsync(5_000);
    const next = Array.from({ length: 50 }, (_, i) => queueKey("chat.postMessage", `C0B${i}`));
    await settle(next.map((key) => call(queue, key, 60_000)));
    // Each new line forgot two of the first 50 (full again by then); the new ones, a token spent, are kept.
    expect(queue.lineCount).toBe(50);
  });

  it("a channel whose bucket is not full again is not forgotten: its pace holds whatever lines come meanwhile", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    await settle([call(queue, POSTS, 10_000)]);
    await vi.advanceTimersByTimeAsync(100);
    await settle(Array.from({ length: 5 }, (_, i) => call(queue, queueKey("chat.postMessage", `C0N${i}`), 10_000)));
    const given: number[] = [];
    await settle([call(queue, POSTS, 10_000).then(() => given.push(c.now()))]);
    expect(given).toEqual([1000]);
  });
});

describe("Retry-After", () => {
  it("a 429 on a channel pauses that channel for Retry-After, then one post, then one a second (no new burst)", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 3 });
    await call(queue, POSTS, 60_000);
    queue.pause(POSTS, 5000);
    const times: number[] = [];
    await settle(Array.from({ length: 3 }, () => call(queue, POSTS, 60_000).then(() => times.push(c.now()))));
    expect(times).toEqual([5000, 6000, 7000]);
  });

  it("after a 429, each post waits a full second after the previous post's reply, so jitter cannot bring two posts closer", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    const slowCall = async () => {
      const turn = (await queue.turn(POSTS, 60_000))!;
      const started = c.now();
      await c.sleep(200);
      turn.release();
      return started;
    };
    const first = (await queue.turn(POSTS, 60_000))!;
    queue.pause(POSTS, 1000);
    const retried = first.again().then(async () => {
      const at = c.now();
      await c.sleep(200);
      first.release();
      return at;
    });
    const starts = await settle([retried, slowCall(), slowCall()]);
    expect(starts).toEqual([1000, 2200, 3400]);
  });

  it("a 429 on one channel leaves the others alone", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c });
    queue.pause(POSTS, 5000);
    expect(await call(queue, queueKey("chat.postMessage", "C0TWO"), 60_000)).toBe(true);
    expect(c.now()).toBe(0);
  });

  it("a method-wide 429 pauses that method for everyone", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c });
    queue.pause("chat.update", 3000);
    const times: number[] = [];
    await settle([call(queue, "chat.update", 60_000), call(queue, "chat.update", 60_000)].map((turn) => turn.then(() => times.push(c.now()))));
    expect(times).toEqual([3000, 3000]);
    expect(await call(queue, POSTS, 60_000)).toBe(true);
  });

  it("the caller that got a 429 waits the pause out holding the line and goes before anyone behind it", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 3 });
    const order: Array<[string, number]> = [];
    const first = (async () => {
      const turn = (await queue.turn(POSTS, 60_000))!;
      queue.pause(POSTS, 2000);
      expect(await turn.again()).toBe(true);
      order.push(["first", c.now()]);
      turn.release();
    })();
    const second = call(queue, POSTS, 60_000).then(() => {
      order.push(["second", c.now()]);
    });
    await settle([first, second]);
    expect(order).toEqual([
      ["first", 2000],
      ["second", 3000],
    ]);
  });

  it("a pause longer than the caller's deadline gives the line up", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c });
    const turn = (await queue.turn(POSTS, 5000))!;
    queue.pause(POSTS, 10_000);
    expect(await turn.again()).toBe(false);
    expect(queue.depth(POSTS)).toBe(0);
  });

  it("counts the callers waiting per key", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    await call(queue, POSTS, 60_000);
    const waiting = [call(queue, POSTS, 60_000), call(queue, POSTS, 60_000)];
    expect(queue.depth(POSTS)).toBe(2);
    expect(queue.depth()).toBe(2);
    await settle(waiting);
    expect(queue.depth()).toBe(0);
  });
});

describe("request posts before side work", () => {
  /** Takes a side-lane turn (a thread notice, a reminder) and releases it at once; true when given. */
  async function sideCall(queue: ChannelQueue, key: string, deadline: number): Promise<boolean> {
    const turn = await queue.turn(key, deadline, { side: true });
    turn?.release();
    return turn !== undefined;
  }

  it("a request post that comes while a side post waits for its moment goes first, and the side post follows a second later", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    await call(queue, POSTS, 60_000);
    await call(queue, POSTS, 60_000);
    const order: Array<[string, number]> = [];
    const notice = sideCall(queue, POSTS, 60_000).then(() => order.push(["notice", c.now()]));
    await vi.advanceTimersByTimeAsync(400);
    // The agent's question: one second to live, so it may not wait behind the notice.
    const request = call(queue, POSTS, c.now() + 1000).then((given) => order.push([given ? "request" : "request refused", c.now()]));
    await settle([notice, request]);
    expect(order).toEqual([
      ["request", 1000],
      ["notice", 3000],
    ]);
  });

  it("a side post leaves one token of the burst, so the next request post goes at once", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    await call(queue, POSTS, 60_000);
    await settle([sideCall(queue, POSTS, 60_000)]);
    const sideAt = c.now();
    expect(sideAt).toBe(1000);
    const givenAt: number[] = [];
    await settle([call(queue, POSTS, sideAt).then((given) => given && givenAt.push(c.now()))]);
    expect(givenAt).toEqual([sideAt]);
  });

  it("request posts queue ahead of side posts already waiting, each lane in its own order", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const head = (await queue.turn(POSTS, 60_000))!;
    const order: string[] = [];
    const turns = [
      sideCall(queue, POSTS, 60_000).then(() => order.push("side 1")),
      sideCall(queue, POSTS, 60_000).then(() => order.push("side 2")),
      call(queue, POSTS, 60_000).then(() => order.push("request 1")),
      call(queue, POSTS, 60_000).then(() => order.push("request 2")),
    ];
    head.release();
    await settle(turns);
    expect(order).toEqual(["request 1", "request 2", "side 1", "side 2"]);
  });

  it("a side post whose deadline comes before a token is left for request posts is not given a turn", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    await call(queue, POSTS, 60_000);
    expect(await settle([sideCall(queue, POSTS, 500)])).toEqual([false]);
    expect(queue.depth(POSTS)).toBe(0);
  });
});

describe("sharing a channel between agent tokens", () => {
  /** Takes a request-post turn for `owner` and releases it at once; resolves when it was given (Unix ms), or undefined. */
  async function postAs(queue: ChannelQueue, owner: string, deadline: number): Promise<number | undefined> {
    const turn = await queue.turn(POSTS, deadline, { owner });
    turn?.release();
    return turn ? Date.now() : undefined;
  }

  it("behind a flood of 90 from one token, another token's request is posted within 3 s, and the flood keeps its order", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 2 });
    const order: string[] = [];
    const flood = Array.from({ length: 90 }, (_, i) => postAs(queue, "looping", 45_000).then((at) => at !== undefined && order.push(`loop ${i + 1}`)));
    await vi.advanceTimersByTimeAsync(5000);
    const askedAt = c.now();
    const deploy = postAs(queue, "deploy", askedAt + 45_000);
    const [postedAt] = await settle<unknown>([deploy, ...flood]);
    expect((postedAt as number) - askedAt).toBeLessThanOrEqual(3000);
    expect(order).toEqual(Array.from({ length: order.length }, (_, i) => `loop ${i + 1}`));
  });

  it("without an owner, posts keep the order they came in", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const order: number[] = [];
    await settle(Array.from({ length: 5 }, (_, i) => call(queue, POSTS, 60_000).then(() => order.push(i))));
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it("a retry keeps its place ahead of every token's turn", async () => {
    const c = clock();
    const queue = new ChannelQueue({ ...c, postsPerSecond: 1, postBurst: 1 });
    const head = (await queue.turn(POSTS, 60_000, { owner: "a" }))!;
    const order: string[] = [];
    const others = ["b", "c"].map((owner) => postAs(queue, owner, 60_000).then(() => void order.push(owner)));
    const retry = queue.turn(POSTS, 60_000, { owner: "a", front: true }).then((turn) => {
      order.push("a retried");
      turn?.release();
    });
    head.release();
    await settle([retry, ...others]);
    expect(order).toEqual(["a retried", "b", "c"]);
  });
});
