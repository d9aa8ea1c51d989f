// Turns the scenarios' results into rows (figure, baseline, ratio, target, PASS/FAIL) and prints them as a table.
import { ratio } from "./stats.mjs";

const ms = (x) => (x === null || x === undefined ? "—" : `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`);
const num = (x, unit = "") => (x === null || x === undefined ? "—" : `${x}${unit}`);
const kb = (bytes) => (bytes === null || bytes === undefined ? "—" : `${(bytes / 1024).toFixed(2)} KB`);

function row(id, figure, { value, baseline = "", ratio: r = null, target = "", pass = null, pending }) {
  return {
    id,
    figure,
    value: pending ? "—" : value,
    baseline,
    ratio: r === null ? "" : `${r}×`,
    target,
    result: pending ? "PENDING" : pass === null ? "info" : pass ? "PASS" : "FAIL",
    ...(pending ? { note: pending } : {}),
  };
}

function unavailable(id, figure, result, target = "") {
  const reason = result?.pending ?? result?.failed ?? "not run";
  return row(id, figure, { value: "—", target, pending: reason });
}

function b1Rows(b1) {
  if (!b1 || b1.failed) return [unavailable("B1", "launch p50 latency", b1, "≤ 2.5× health")];
  const l = b1.launch.latencyMs;
  const h = b1.health.latencyMs;
  const p50 = ratio(l.p50, h.p50);
  const loaded = `${b1.concurrency} in flight`;
  return [
    row("B1", "launch p50 (1 in flight)", {
      value: ms(l.p50),
      baseline: `health ${ms(h.p50)}`,
      ratio: p50,
      target: "≤ 2.5× (moonshot 1.5×)",
      pass: p50 !== null && p50 <= 2.5 && b1.failures === 0,
    }),
    row("B1", "launch p99 (1 in flight)", {
      value: ms(l.p99),
      baseline: `health ${ms(h.p99)}`,
      ratio: ratio(l.p99, h.p99),
    }),
    row("B1", `launch p50 (${loaded})`, {
      value: ms(b1.launch.loadedLatencyMs.p50),
      baseline: `health ${ms(b1.health.loadedLatencyMs.p50)}`,
      ratio: ratio(b1.launch.loadedLatencyMs.p50, b1.health.loadedLatencyMs.p50),
    }),
    row("B1", `launch requests/s (${loaded})`, {
      value: num(b1.launch.requestsPerSecond),
      baseline: `health ${b1.health.requestsPerSecond}`,
      ratio: ratio(b1.launch.requestsPerSecond, b1.health.requestsPerSecond),
    }),
  ];
}

function b2Rows(b2) {
  if (!b2 || b2.failed) return [unavailable("B2", "first delta p50", b2, "≤ 6× echo")];
  const p = b2.product;
  const e = b2.echo;
  const fd50 = ratio(p.firstDeltaMs.p50, e.firstDeltaMs.p50);
  const fd99 = ratio(p.firstDeltaMs.p99, e.firstDeltaMs.p99);
  const tput = ratio(p.turnsPerSecond, e.turnsPerSecond);
  const complete = p.errors === 0 && p.succeeded === p.turns;
  const soloFd50 = b2.oneThread
    ? ratio(b2.oneThread.product.firstDeltaMs.p50, b2.oneThread.echo.firstDeltaMs.p50)
    : null;
  return [
    row("B2", "send → first delta p50", {
      value: ms(p.firstDeltaMs.p50),
      baseline: `echo ${ms(e.firstDeltaMs.p50)}`,
      ratio: fd50,
      target: "≤ 6×",
      pass: fd50 !== null && fd50 <= 6 && complete,
    }),
    row("B2", "send → first delta p95", {
      value: ms(p.firstDeltaMs.p95),
      baseline: `echo ${ms(e.firstDeltaMs.p95)}`,
      ratio: ratio(p.firstDeltaMs.p95, e.firstDeltaMs.p95),
    }),
    row("B2", "send → first delta p99", {
      value: ms(p.firstDeltaMs.p99),
      baseline: `echo ${ms(e.firstDeltaMs.p99)}`,
      ratio: fd99,
      target: "≤ 5×",
      pass: fd99 !== null && fd99 <= 5 && complete,
    }),
    ...["p50", "p95", "p99"].map((q) =>
      row("B2", `send → run end ${q}`, {
        value: ms(p.runEndMs[q]),
        baseline: `echo ${ms(e.runEndMs[q])}`,
        ratio: ratio(p.runEndMs[q], e.runEndMs[q]),
      }),
    ),
    row("B2", "turns completed", {
      value: `${p.succeeded}/${b2.threads * b2.turnsPerThread}`,
      baseline: `echo ${e.succeeded}/${e.turns}`,
      target: "all",
      pass: complete,
    }),
    row("B2", "lost deltas", {
      value: num(p.lostDeltas),
      baseline: `echo ${e.lostDeltas}`,
      target: "0",
      pass: p.lostDeltas === 0,
    }),
    row("B2", "duplicated deltas", {
      value: num(p.duplicatedDeltas),
      baseline: `echo ${e.duplicatedDeltas}`,
      target: "0",
      pass: p.duplicatedDeltas === 0,
    }),
    ...(b2.oneThread
      ? [
          row("B2", "  one thread alone: first delta p50", {
            value: ms(b2.oneThread.product.firstDeltaMs.p50),
            baseline: `echo ${ms(b2.oneThread.echo.firstDeltaMs.p50)}`,
            ratio: soloFd50,
            target: "≤ 3× (moonshot 2×)",
            pass: soloFd50 !== null && soloFd50 <= 3,
          }),
          row("B2", "  one thread alone: run end p50", {
            value: ms(b2.oneThread.product.runEndMs.p50),
            baseline: `echo ${ms(b2.oneThread.echo.runEndMs.p50)}`,
            ratio: ratio(b2.oneThread.product.runEndMs.p50, b2.oneThread.echo.runEndMs.p50),
          }),
        ]
      : []),
    row("B2", `turns/s (${b2.threads} threads)`, {
      value: num(p.turnsPerSecond),
      baseline: `echo ${e.turnsPerSecond}`,
      ratio: tput,
      target: "≥ 0.35×",
      pass: tput !== null && tput >= 0.35 && complete,
    }),
    ...peerRows(b2),
  ];
}

/** The product against the peer (bench/peer-worker), from the same run's alternating rounds. */
function peerRows(b2) {
  const p = b2.product;
  const q = b2.peer;
  if (!q)
    return [
      unavailable("B2", "vs peer: first delta p50", { pending: "the peer Worker did not run" }, "≤ 0.3×"),
    ];
  const fd50 = ratio(p.firstDeltaMs.p50, q.firstDeltaMs.p50);
  const tput = ratio(p.turnsPerSecond, q.turnsPerSecond);
  const complete = p.errors === 0 && p.succeeded === p.turns;
  const solo = b2.oneThread?.peer;
  return [
    row("B2", "vs peer: send → first delta p50", {
      value: ms(p.firstDeltaMs.p50),
      baseline: `peer ${ms(q.firstDeltaMs.p50)}`,
      ratio: fd50,
      target: "≤ 0.3× (moonshot 0.25×)",
      pass: fd50 !== null && fd50 <= 0.3 && complete,
    }),
    row("B2", "vs peer: send → first delta p99", {
      value: ms(p.firstDeltaMs.p99),
      baseline: `peer ${ms(q.firstDeltaMs.p99)}`,
      ratio: ratio(p.firstDeltaMs.p99, q.firstDeltaMs.p99),
    }),
    row("B2", "vs peer: send → run end p50", {
      value: ms(p.runEndMs.p50),
      baseline: `peer ${ms(q.runEndMs.p50)}`,
      ratio: ratio(p.runEndMs.p50, q.runEndMs.p50),
    }),
    row("B2", `vs peer: turns/s (${b2.threads} threads)`, {
      value: num(p.turnsPerSecond),
      baseline: `peer ${q.turnsPerSecond}`,
      ratio: tput,
      target: "≥ 2.5× (moonshot 3×)",
      pass: tput !== null && tput >= 2.5 && complete,
    }),
    row("B2", "  peer turns completed", {
      value: `${q.succeeded}/${q.turns}`,
      baseline: `${q.lostDeltas} lost, ${q.duplicatedDeltas} duplicated deltas`,
    }),
    ...(solo
      ? [
          row("B2", "  one thread alone vs peer: first delta p50", {
            value: ms(b2.oneThread.product.firstDeltaMs.p50),
            baseline: `peer ${ms(solo.firstDeltaMs.p50)}`,
            ratio: ratio(b2.oneThread.product.firstDeltaMs.p50, solo.firstDeltaMs.p50),
          }),
          row("B2", "  one thread alone vs peer: run end p50", {
            value: ms(b2.oneThread.product.runEndMs.p50),
            baseline: `peer ${ms(solo.runEndMs.p50)}`,
            ratio: ratio(b2.oneThread.product.runEndMs.p50, solo.runEndMs.p50),
          }),
        ]
      : []),
  ];
}

function b3Rows(b3) {
  if (!b3 || b3.failed) return [unavailable("B3", "newest-leaf branch p50", b3, "≤ 2 ms")];
  const speedup = ratio(b3.listAndWalkMs.p50, b3.branchFullMs.p50);
  const pageSpeedup = ratio(b3.listAndWalkMs.p50, b3.branchFirstPageMs.p50);
  const depth = b3.tree.branchDepth;
  return [
    row("B3", "appends/s into one thread", {
      value: num(b3.append.perSecond),
      baseline: `plain INSERT ${b3.rawInsert.perSecond}/s`,
      ratio: ratio(b3.append.perSecond, b3.rawInsert.perSecond),
    }),
    row("B3", `newest-leaf branch (${depth} entries) p50`, {
      value: ms(b3.branchFullMs.p50),
      baseline: `list+walk ${ms(b3.listAndWalkMs.p50)}`,
      ratio: ratio(b3.branchFullMs.p50, b3.listAndWalkMs.p50),
      target: "≤ 2 ms, ≥ 20× faster",
      pass: b3.branchFullMs.p50 <= 2 && speedup !== null && speedup >= 20,
    }),
    row("B3", "  speed-up over list+walk", {
      value: `${speedup}×`,
      target: "≥ 20×",
      pass: speedup !== null && speedup >= 20,
    }),
    row("B3", "  newest-leaf branch p99", {
      value: ms(b3.branchFullMs.p99),
      baseline: `list+walk ${ms(b3.listAndWalkMs.p99)}`,
    }),
    row("B3", "  of which the CTE alone (p50)", { value: ms(b3.branchSqlOnlyMs.p50) }),
    row("B3", "newest-leaf first page (50) p50", {
      value: ms(b3.branchFirstPageMs.p50),
      baseline: `list+walk ${ms(b3.listAndWalkMs.p50)}`,
      ratio: ratio(b3.branchFirstPageMs.p50, b3.listAndWalkMs.p50),
      target: "≤ 2 ms, ≥ 20× faster",
      pass: b3.branchFirstPageMs.p50 <= 2 && pageSpeedup !== null && pageSpeedup >= 20,
    }),
  ];
}

function b4Rows(cost, lag) {
  const rows = [];
  if (!cost || cost.failed) {
    rows.push(unavailable("B4", "D1 batches per turn", cost, "≤ 1"));
  } else {
    rows.push(
      row("B4", "D1 batches per turn", {
        value: num(cost.d1BatchesPerTurn),
        baseline: `+ ${cost.d1SingleStatementsPerTurn} single statements`,
        target: "≤ 1",
        pass: cost.d1BatchesPerTurn <= 1 && cost.d1SingleStatementsPerTurn === 0,
      }),
      row("B4", "D1 statements per turn", {
        value: num(cost.d1StatementsPerTurn),
        baseline: `${cost.d1RowsWrittenPerTurn} D1 rows written`,
      }),
      row("B4", "DO rows written per turn (a drain per turn)", {
        value: num(cost.doRowsWrittenPerTurn),
        baseline: `${cost.doRowsWrittenPerTurnWithoutDrain} before the drain`,
        target: "≤ 12",
        pass: cost.doRowsWrittenPerTurn <= 12,
      }),
      ...(cost.coalesced
        ? [
            row("B4", `  turns back to back, drains per ${cost.coalesced.windowMs} ms window`, {
              value: `${num(cost.coalesced.doRowsWrittenPerTurn)} rows`,
              baseline: `${cost.coalesced.drains} drains for ${cost.coalesced.turns} turns, ${cost.coalesced.d1BatchesPerTurn} D1 batches/turn`,
            }),
          ]
        : []),
      row("B4", "in-object turn: send → first delta (mean)", {
        value: ms(cost.firstDeltaMsMean),
        baseline: `sealed ${ms(cost.turnMsMean)}, drain ${ms(cost.drainMsMean)}`,
      }),
      row("B4", "DO stream-chunk rows per turn", {
        value: num(cost.doChunkRowsWrittenPerTurn),
        baseline: `${cost.deltasPerTurn} deltas`,
      }),
      row("B4", "DO SQL statements per turn (a drain per turn)", {
        value: num(cost.doStatementsPerTurn),
        baseline: "reads and writes, each a call into SQLite",
      }),
    );
  }
  if (!lag || lag.failed || lag.pending) {
    rows.push(unavailable("B4", "projection lag DO→D1 p99", lag, "≤ 1 s"));
  } else {
    rows.push(
      row("B4", "projection lag DO→D1 p50", {
        value: ms(lag.lagMs.p50),
        baseline: `${lag.projected} replies`,
      }),
      ...(lag.drainsPerTurn !== undefined
        ? [row("B4", "  D1 drains per turn under B2's load", { value: num(lag.drainsPerTurn) })]
        : []),
      row("B4", "projection lag DO→D1 p99", {
        value: ms(lag.lagMs.p99),
        baseline: lag.missing > 0 ? `${lag.missing} never projected` : "",
        target: "≤ 1 s",
        pass: lag.lagMs.p99 <= 1000 && lag.missing === 0,
      }),
    );
  }
  return rows;
}

function b5Rows(sizes, browser, consoleSizes) {
  const rows = [];
  if (!sizes || sizes.failed || sizes.pending) {
    rows.push(
      unavailable("B5", "loader gzip", sizes, "≤ 2 KB"),
      unavailable("B5", "widget gzip", sizes, "≤ 20 KB"),
    );
  } else {
    rows.push(
      row("B5", "loader gzip", {
        value: kb(sizes.loader.gzipBytes),
        baseline: `${kb(sizes.loader.bytes)} raw`,
        ratio: ratio(sizes.loader.gzipBytes, sizes.loader.budgetBytes),
        target: "≤ 2 KB",
        pass: sizes.loader.gzipBytes <= sizes.loader.budgetBytes,
      }),
      row("B5", "widget gzip", {
        value: kb(sizes.widget.gzipBytes),
        baseline: `${kb(sizes.widget.bytes)} raw`,
        ratio: ratio(sizes.widget.gzipBytes, sizes.widget.budgetBytes),
        target: "≤ 20 KB",
        pass: sizes.widget.gzipBytes <= sizes.widget.budgetBytes,
      }),
    );
  }
  if (!consoleSizes || consoleSizes.failed || consoleSizes.pending) {
    rows.push(unavailable("B5", "console first screen gzip", consoleSizes, "≤ 80 KB"));
  } else {
    const { firstScreen, lazy } = consoleSizes;
    rows.push(
      row("B5", "console first screen gzip", {
        value: kb(firstScreen.gzipBytes),
        baseline: `${firstScreen.files} files + page`,
        ratio: ratio(firstScreen.gzipBytes, firstScreen.budgetBytes),
        target: "≤ 80 KB",
        pass: firstScreen.gzipBytes <= firstScreen.budgetBytes,
      }),
      row("B5", "console on demand gzip", {
        value: kb(lazy.gzipBytes),
        baseline: `${lazy.chunks} chunks, largest ${kb(lazy.largest?.gzipBytes)}`,
      }),
    );
  }
  if (!browser || browser.failed || browser.pending) {
    rows.push(unavailable("B5", "script → launcher visible p50", browser));
  } else {
    rows.push(
      row("B5", "script → launcher visible p50", {
        value: ms(browser.scriptToLauncherMs.p50),
        baseline: `max ${ms(browser.scriptToLauncherMs.max)}`,
      }),
      row("B5", "open → ready p50", {
        value: ms(browser.openToReadyMs.p50),
        baseline: `max ${ms(browser.openToReadyMs.max)}`,
      }),
    );
  }
  return rows;
}

function b10Rows(b10) {
  if (!b10 || b10.failed) {
    return [unavailable("B10", "launch p50, CONTROL_PLANE=http vs D1", b10, "report")];
  }
  const l = b10.launch;
  const r = b10.boundReady;
  return [
    row("B10", "launch p50, CONTROL_PLANE=http (service + PostgreSQL, localhost)", {
      value: ms(l.http.p50),
      baseline: `D1 ${ms(l.d1.p50)}`,
      ratio: ratio(l.http.p50, l.d1.p50),
      target: "report",
    }),
    row("B10", "connect → ready of a bound thread, http vs D1 (pin in the object)", {
      value: ms(r.http.p50),
      baseline: `D1 ${ms(r.d1.p50)}`,
      ratio: ratio(r.http.p50, r.d1.p50),
      target: "unchanged (≤ 1.25×)",
      pass: r.http.p50 !== null && r.d1.p50 !== null && r.http.p50 <= 1.25 * r.d1.p50 && b10.failures === 0,
    }),
  ];
}

function b6Rows(bundle, cold) {
  const rows = [];
  if (!bundle || bundle.failed || bundle.pending) {
    rows.push(unavailable("B6", "Worker bundle gzip", bundle, "≤ 450 KB"));
  } else {
    rows.push(
      // Judged by the larger of wrangler's own figure and a gzip -9 of the modules it wrote.
      row("B6", "Worker bundle gzip", {
        value: kb(judgedBundleBytes(bundle)),
        baseline: `${kb(bundle.bytes)} raw, gzip -9 ${kb(bundle.gzipBytes)}`,
        ratio: ratio(judgedBundleBytes(bundle), bundle.budgetBytes),
        target: "≤ 450 KB",
        pass: judgedBundleBytes(bundle) <= bundle.budgetBytes,
      }),
    );
  }
  if (!cold || cold.failed) {
    rows.push(unavailable("B6", "new thread first ready p50", cold));
  } else {
    rows.push(
      row("B6", "new thread first ready p50", {
        value: ms(cold.newThreadReadyMs.p50),
        baseline: `warm ${ms(cold.warmThreadReadyMs.p50)}`,
        ratio: ratio(cold.newThreadReadyMs.p50, cold.warmThreadReadyMs.p50),
      }),
      row("B6", "new thread first ready p99", {
        value: ms(cold.newThreadReadyMs.p99),
        baseline: `warm ${ms(cold.warmThreadReadyMs.p99)}`,
        ratio: ratio(cold.newThreadReadyMs.p99, cold.warmThreadReadyMs.p99),
      }),
    );
  }
  return rows;
}

function b7Rows(b7) {
  if (!b7 || b7.failed) return [unavailable("B7", "connect p50, D1 +100 ms", b7, "≤ 1.2× no delay")];
  const d = b7.delayed;
  const n = b7.direct;
  const connect = ratio(d.connectReadyMs.p50, n.connectReadyMs.p50);
  const extra = `D1 +${b7.delayMs} ms`;
  return [
    row("B7", `connect → ready p50, ${extra}`, {
      value: ms(d.connectReadyMs.p50),
      baseline: `no delay ${ms(n.connectReadyMs.p50)}`,
      ratio: connect,
      target: "≤ 1.2×",
      pass: connect !== null && connect <= 1.2,
    }),
    row("B7", `connect → ready p95, ${extra}`, {
      value: ms(d.connectReadyMs.p95),
      baseline: `no delay ${ms(n.connectReadyMs.p95)}`,
      ratio: ratio(d.connectReadyMs.p95, n.connectReadyMs.p95),
    }),
    row("B7", `launch-resume p50, ${extra}`, {
      value: ms(d.resumeLaunchMs.p50),
      baseline: `no delay ${ms(n.resumeLaunchMs.p50)}`,
      ratio: ratio(d.resumeLaunchMs.p50, n.resumeLaunchMs.p50),
    }),
    row("B7", `fresh launch p50, ${extra}`, {
      value: ms(d.freshLaunchMs.p50),
      baseline: `no delay ${ms(n.freshLaunchMs.p50)}`,
      ratio: ratio(d.freshLaunchMs.p50, n.freshLaunchMs.p50),
    }),
  ];
}

function judgedBundleBytes(bundle) {
  const reported = bundle.wranglerReportedKiB ? Math.round(bundle.wranglerReportedKiB.gzip * 1024) : 0;
  return Math.max(bundle.gzipBytes, reported);
}

function b8Rows(b8) {
  if (!b8 || b8.failed) return [unavailable("B8", "analytics/search on 1M messages", b8, "p50 ≤ 50 ms")];
  const size = `${b8.messages.toLocaleString("en")} msgs`;
  const rows = [
    row("B8", `synthetic tenant seeded (${size})`, {
      value: `${b8.seedSeconds} s`,
      baseline: `+ ${b8.noiseTenantMessages.toLocaleString("en")} msgs other tenant in ${b8.noiseSeedSeconds} s`,
      target: b8.messages >= 1_000_000 ? "" : "quick run: not 1M",
      pass: null,
    }),
  ];
  const figures = [
    ["analytics-version", "30-day analytics by version", true],
    ["analytics-day", "30-day analytics by day", false],
    ["search", `search one word (${b8.matchingMessages.warranty} msgs match)`, true],
    ["search-page-2", "search one word, second page", false],
    ["search-two-words", "search two words", false],
    ["search-common", `search a common word (${b8.matchingMessages.order} msgs match)`, false],
    ["search-small-tenant", "search one word in the 100k-message tenant", false],
  ];
  const measured = [
    ...figures.map(([kind, figure, judged]) => [b8.queries[kind], figure, judged]),
    ...figures
      .filter(([kind]) => b8.afterOptimize?.[kind] !== undefined)
      .map(([kind, figure]) => [
        b8.afterOptimize[kind],
        `${figure}, FTS optimized (${b8.ftsOptimizeSeconds} s)`,
        false,
      ]),
  ];
  for (const [q, figure, judged] of measured) {
    rows.push(
      row("B8", `${figure} p50 (${size})`, {
        value: ms(q.latencyMs.p50),
        baseline: `p95 ${ms(q.latencyMs.p95)}; in Worker p50 ${ms(q.inWorkerMs.p50)}`,
        target: judged ? "≤ 50 ms" : "",
        pass: judged ? q.latencyMs.p50 !== null && q.latencyMs.p50 <= 50 : null,
      }),
    );
  }
  return rows;
}

function b9Rows(b9) {
  if (!b9 || b9.failed) {
    return [unavailable("B9", "decision → first delta p50", b9, "≤ 2× send → first delta")];
  }
  const t = b9.thread;
  const p = b9.parked;
  const all = (n, of) => n === of;
  return [
    row("B9", "decision → first delta p50 (one thread)", {
      value: ms(t.decisionToFirstDeltaMs.p50),
      baseline: `send → first delta ${ms(t.sendToFirstDeltaMs.p50)}`,
      ratio: t.ratioP50,
      target: "≤ 2×",
      pass: t.ratioP50 !== null && t.ratioP50 <= 2,
    }),
    row("B9", "  decision → first delta p95", {
      value: ms(t.decisionToFirstDeltaMs.p95),
      baseline: `send → first delta ${ms(t.sendToFirstDeltaMs.p95)}`,
      ratio: ratio(t.decisionToFirstDeltaMs.p95, t.sendToFirstDeltaMs.p95),
    }),
    row("B9", "  same tool without approval: send → first delta p50", {
      value: ms(t.toolTurnSendToFirstDeltaMs?.p50),
      baseline: `decision → first delta ${ms(t.decisionToFirstDeltaMs.p50)}`,
      ratio: ratio(t.decisionToFirstDeltaMs.p50, t.toolTurnSendToFirstDeltaMs?.p50 ?? null),
    }),
    row("B9", "  send → requires_action p50", {
      value: ms(t.sendToParkedMs.p50),
      baseline: `decision → run end ${ms(t.decisionToRunEndMs.p50)}`,
    }),
    row("B9", "  turns completed (plain, approval, tool without approval)", {
      value: `${t.plainSucceeded}, ${t.approvalSucceeded}, ${t.directSucceeded ?? 0} of ${t.samples}`,
      baseline: `${t.lostDeltas} lost, ${t.duplicatedDeltas} duplicated deltas`,
      target: "all",
      pass:
        all(t.plainSucceeded, t.samples) &&
        all(t.approvalSucceeded, t.samples) &&
        all(t.directSucceeded, t.samples) &&
        t.lostDeltas === 0 &&
        t.duplicatedDeltas === 0,
    }),
    row("B9", `parked runs → continuations after a restart`, {
      value: `${p.continuations}/${p.runs}`,
      baseline: `${p.decisionsOk} decisions 200, restart ${p.restartSeconds} s`,
      target: "all",
      pass: all(p.continuations, p.runs) && all(p.decisionsOk, p.runs),
    }),
    row("B9", "  tool calls (once per approval, webhook-id = approvalId)", {
      value: `${p.toolCalls}`,
      baseline: `${p.toolCallsMatchingApprovals} match, ${p.duplicateToolCalls} duplicated`,
      target: `= ${p.runs}`,
      pass: p.toolCalls === p.runs && p.toolCallsMatchingApprovals === p.runs && p.duplicateToolCalls === 0,
    }),
    row("B9", "  runs left requires_action", {
      value: `${p.runsLeftRequiresAction}`,
      baseline: `${p.runsNotSucceeded} not succeeded, ${p.pendingApprovals} approvals pending`,
      target: "0",
      pass: p.runsLeftRequiresAction === 0 && p.runsNotSucceeded === 0 && p.pendingApprovals === 0,
    }),
    row("B9", "  decision request p50 (object woken from storage)", {
      value: ms(p.decisionMs.p50),
      baseline: `p99 ${ms(p.decisionMs.p99)}`,
    }),
  ];
}

function b11Rows(b11, module) {
  const rows = [];
  if (!b11 || b11.failed) rows.push(unavailable("B11", "10 MiB upload p50", b11));
  else {
    const failed = b11.failures > 0 ? ` (${b11.failures} failed: ${b11.firstFailure})` : "";
    rows.push(
      row("B11", `10 MiB upload p50 (${b11.uploads} uploads)${failed}`, {
        value: `${ms(b11.uploadMs.p50)} (${b11.uploadMiBps} MiB/s)`,
        baseline: `bare R2 PUT ${ms(b11.putMs.p50)} (${b11.putMiBps} MiB/s)`,
        ratio: ratio(b11.uploadMs.p50, b11.putMs.p50),
      }),
      row("B11", "  10 MiB upload p95", {
        value: ms(b11.uploadMs.p95),
        baseline: `bare R2 PUT ${ms(b11.putMs.p95)}`,
        ratio: ratio(b11.uploadMs.p95, b11.putMs.p95),
      }),
    );
  }
  if (module !== undefined) {
    rows.push(
      module.gzipBytes === undefined
        ? unavailable("B11", "widget attachments module (gzip)", module)
        : row("B11", "widget attachments module (gzip, on demand)", {
            value: kb(module.gzipBytes),
            target: `≤ ${kb(module.budgetBytes)}`,
            pass: module.gzipBytes <= module.budgetBytes,
          }),
    );
  }
  return rows;
}

function b12Rows(b12) {
  if (!b12 || b12.failed) return [unavailable("B12", "100-case eval suite, local model", b12, "≤ 60 s")];
  const seconds = (x) => (x === null || x === undefined ? "—" : `${(x / 1000).toFixed(1)} s`);
  return [
    row("B12", `${b12.cases}-case eval suite, local model: run created → completed (${b12.passed} passed)`, {
      value: seconds(b12.wallMs),
      baseline: `run's own duration ${seconds(b12.runDurationMs)}; case p50 ${ms(b12.caseMsP50)}`,
      target: "≤ 60 s",
      pass: b12.status === "completed" && b12.passed === b12.cases && b12.wallMs <= 60_000,
    }),
  ];
}

function b13Rows(b13) {
  if (!b13 || b13.failed) return [unavailable("B13", "DO requests per open idle socket-hour", b13, "≤ 13")];
  const hour = b13.idleSocketHour;
  const quota = b13.quotaCallsPer100Turns;
  const tables = Object.entries(hour.byTable)
    .map(([table, rows]) => `${table} ${rows}`)
    .join(", ");
  return [
    row("B13", "DO requests (alarms) per open idle socket-hour", {
      value: num(hour.alarmsPerHour),
      baseline: "main 9ff5c7b: 122 (a sweep every 30 s)",
      target: "≤ 13 (one per 5-min standing recheck)",
      pass: hour.alarmsPerHour <= 13,
    }),
    row("B13", "DO rows written per open idle socket-hour", {
      value: num(hour.rowsWrittenPerHour),
      baseline: `main 9ff5c7b: 987; now ${tables} (each setAlarm() billed as a row)`,
      target: "≤ 100",
      pass: hour.rowsWrittenPerHour <= 100,
    }),
    row("B13", "TenantQuota calls per 100 turns (no run quota, a turn every 5 s)", {
      value: num(quota.total),
      baseline: `startRun ${quota.startRun}, endRun ${quota.endRun}, renewRun ${quota.renewRun}; main 9ff5c7b: endRun 100 + startRun every 30 s`,
      target: "endRun ≤ 1 per window",
      pass: quota.endRun <= Math.ceil(quota.startRun / 2) + 1,
    }),
  ];
}

export function buildRows(results) {
  const has = (key) => key in results;
  return [
    ...(has("b1") ? b1Rows(results.b1) : []),
    ...(has("b2") ? b2Rows(results.b2) : []),
    ...(has("b3") ? b3Rows(results.b3) : []),
    ...(has("b4Cost") || has("b4Lag") ? b4Rows(results.b4Cost, results.b4Lag) : []),
    ...(has("b5Sizes") || has("b5Browser") || has("b5Console")
      ? b5Rows(results.b5Sizes, results.b5Browser, results.b5Console)
      : []),
    ...(has("b6Bundle") || has("b6ColdStart") ? b6Rows(results.b6Bundle, results.b6ColdStart) : []),
    ...(has("b7") ? b7Rows(results.b7) : []),
    ...(has("b8") ? b8Rows(results.b8) : []),
    ...(has("b9") ? b9Rows(results.b9) : []),
    ...(has("b10") ? b10Rows(results.b10) : []),
    ...(has("b11") || has("b11Module") ? b11Rows(results.b11, results.b11Module) : []),
    ...(has("b12") ? b12Rows(results.b12) : []),
    ...(has("b13") ? b13Rows(results.b13) : []),
  ];
}

export function printTable(rows, meta) {
  const columns = ["id", "figure", "value", "baseline", "ratio", "target", "result"];
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells) =>
    cells
      .map((cell, i) => String(cell).padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  const m = meta.machine;
  console.log(
    `\nagent-threads bench — ${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}, wrangler ${m.wrangler}` +
      `, load ${m.loadAverageAtStart.join("/")} → ${m.loadAverageAtEnd.join("/")}${meta.quick ? " (quick)" : ""}\n`,
  );
  console.log(line(columns));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(columns.map((c) => r[c])));
  const notes = rows.filter((r) => r.note);
  if (notes.length > 0) {
    console.log("");
    for (const r of notes) console.log(`${r.id} ${r.figure.trim()}: ${r.note}`);
  }
}
