// Where an SSE client resumes a run: the Last-Event-ID it sends, read as a delta seq or as "from the start".
import { describe, expect, it } from "vitest";
import { lastEventId } from "../../src/thread/object/sse-stream";

const withId = (id?: string) =>
  new Request(
    "https://agents.example/messages",
    id === undefined ? {} : { headers: { "Last-Event-ID": id } },
  );

describe("lastEventId", () => {
  it("reads a positive whole seq and treats anything else as the start of the run", () => {
    expect(lastEventId(withId("5"))).toBe(5);
    expect(lastEventId(withId("abc"))).toBe(0);
    expect(lastEventId(withId("-1"))).toBe(0);
    expect(lastEventId(withId("1.5"))).toBe(0);
    expect(lastEventId(withId())).toBe(0);
  });
});
