// The console charts' arithmetic: round axes, a value for every day of a range.
import { describe, expect, it } from "vitest";
import { daysBetween, maxOf, niceTicks, perDay } from "../../src/console/charts/scale";

describe("niceTicks", () => {
  it("rounds the axis up to a 1/2/2.5/5 step", () => {
    expect(niceTicks(7)).toEqual({ top: 8, ticks: [0, 2, 4, 6, 8] });
    expect(niceTicks(1234)).toEqual({ top: 1500, ticks: [0, 500, 1000, 1500] });
    expect(niceTicks(900)).toEqual({ top: 1000, ticks: [0, 250, 500, 750, 1000] });
    expect(niceTicks(3)).toEqual({ top: 3, ticks: [0, 1, 2, 3] });
  });

  it("never labels counts with fractions, and draws an empty chart with a unit axis", () => {
    expect(niceTicks(1)).toEqual({ top: 1, ticks: [0, 1] });
    expect(niceTicks(0)).toEqual({ top: 1, ticks: [0, 1] });
    expect(niceTicks(Number.NaN)).toEqual({ top: 1, ticks: [0, 1] });
  });
});

describe("days", () => {
  it("lists every UTC day of the range, across a month's end", () => {
    expect(daysBetween("2026-11-29", "2026-12-02")).toEqual([
      "2026-11-29",
      "2026-11-30",
      "2026-12-01",
      "2026-12-02",
    ]);
    expect(daysBetween("2026-12-02", "2026-12-01")).toEqual([]);
  });

  it("fills days without activity: 0 for counts, null (a gap) for latencies", () => {
    const days = ["2026-12-01", "2026-12-02", "2026-12-03"];
    const items = [{ key: "2026-12-02", turns: 4, p50: 120 }];
    expect(
      perDay(
        days,
        items,
        (i) => i.key,
        (i) => i.turns,
      ),
    ).toEqual([0, 4, 0]);
    expect(
      perDay(
        days,
        items,
        (i) => i.key,
        (i) => i.p50,
        null,
      ),
    ).toEqual([null, 120, null]);
  });

  it("takes the largest value, or the largest sum when stacked", () => {
    expect(
      maxOf([
        [1, 5, null],
        [4, 2, 3],
      ]),
    ).toBe(5);
    expect(
      maxOf(
        [
          [1, 5, null],
          [4, 2, 3],
        ],
        true,
      ),
    ).toBe(7);
    expect(maxOf([])).toBe(0);
  });
});
