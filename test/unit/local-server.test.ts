// Scripts find the running `npm run dev` on whatever port it was started: PORT first, then its record, then 8787.
import { describe, expect, it } from "vitest";
import { DEFAULT_PORT, localBaseUrl, localPort } from "../../scripts/lib/local-server.mjs";

const record =
  (port: number, pid = 4242) =>
  () =>
    JSON.stringify({ port, pid, url: `http://localhost:${port}` });
const running = () => true;

describe("the local server's port", () => {
  it("follows the port a running npm run dev recorded", () => {
    expect(localPort({ env: {}, readRecord: record(8799), isRunning: running })).toBe(8799);
    expect(localBaseUrl({ env: {}, readRecord: record(8799), isRunning: running })).toBe(
      "http://localhost:8799",
    );
  });

  it("lets PORT win over the record", () => {
    expect(localPort({ env: { PORT: "9001" }, readRecord: record(8799), isRunning: running })).toBe(9001);
  });

  it("ignores a record whose server is gone, a missing record and a malformed one", () => {
    expect(localPort({ env: {}, readRecord: record(8799), isRunning: () => false })).toBe(DEFAULT_PORT);
    const missing = () => {
      throw new Error("ENOENT");
    };
    expect(localPort({ env: {}, readRecord: missing, isRunning: running })).toBe(DEFAULT_PORT);
    expect(localPort({ env: {}, readRecord: () => "{", isRunning: running })).toBe(DEFAULT_PORT);
    expect(localPort({ env: {}, readRecord: () => '{"port":"x","pid":1}', isRunning: running })).toBe(
      DEFAULT_PORT,
    );
  });
});
