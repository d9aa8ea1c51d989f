// Prints the table of a saved run again (`node bench/print.mjs [file]`, default bench/results/latest.json).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/lib/paths.mjs";
import { buildRows, printTable } from "./lib/table.mjs";

const file = process.argv[2] ?? join(root, "bench", "results", "latest.json");
const report = JSON.parse(readFileSync(file, "utf8"));
printTable(buildRows(report.results), report);
