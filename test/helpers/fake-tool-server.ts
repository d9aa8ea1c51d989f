// A tool's HTTP endpoint without a network: scripted answers, every request recorded, and a clock the test moves.

export interface SentRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  redirect: RequestInit["redirect"];
  /** The request's signal, so a test can read why a call was given up (timeout or cancellation). */
  signal: AbortSignal | undefined;
}

export type ToolAnswer = (signal: AbortSignal) => Response | Promise<Response>;

/** Records every request and answers from the script; the last answer repeats. */
export function fakeToolServer(...answers: ToolAnswer[]): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    sent.push({
      url: String(input),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : "",
      redirect: init?.redirect,
      signal: init?.signal ?? undefined,
    });
    const answer = answers[Math.min(sent.length - 1, answers.length - 1)];
    if (answer === undefined) throw new Error("no answer scripted");
    return answer(init?.signal ?? new AbortController().signal);
  };
  return { fetch: fetcher, sent };
}

export const jsonResponse = (value: unknown, status = 200): Response =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

/** Never answers, but gives up when the request is aborted, as a real fetch does. */
export const never: ToolAnswer = (signal) =>
  new Promise<Response>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

/** A clock that moves only when the test says so. */
export function fakeClock(start = 1_750_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
