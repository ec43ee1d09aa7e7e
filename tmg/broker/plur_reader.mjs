// The broker's read process of PLUR: `node plur_reader.mjs <@plur-ai/mcp entry> [args...]`.
//
// It is the real server (the entry is imported and serves stdio as it always does), with two
// changes: its reads do not write, and its inject answers with every selected engram's words
// (wholeWords, below). First, the reads: PLUR 0.20.0 reinforces what `plur_inject*` and `plur_recall`
// return (activation, co-access, injection_count, a co_injection history line) by rewriting the
// whole engrams.yaml on every read, which also throws its parsed copy away: at a year of use every
// prompt paid a YAML dump and a YAML parse of the store. Here those steps are skipped, so the
// parsed store stays cached until something else changes the file; the broker replays the same
// reads on PLUR's writer process when the store is idle (tmg/broker/reinforce.py), so the
// reinforcement still lands, in PLUR's own code, off every prompt's path.
//
// If this PLUR does not have the two methods (another version), nothing is changed, and the
// "reader-patched" line on stderr says so.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const entry = process.argv[2];
process.argv.splice(1, 1); // the server sees the argv it would have had: [node, entry, ...]

function coreEntry(from) {
  // Node's own lookup for a bare import, from the mcp entry's folder upwards.
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, "node_modules", "@plur-ai", "core", "package.json");
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8"));
      const target = pkg.exports?.["."]?.import ?? pkg.module ?? pkg.main;
      return join(dirname(manifest), target);
    }
    if (dirname(dir) === dir) return null;
  }
}

// Every engram an inject selected, in words: PLUR's MCP answer drops the constraints bucket (its
// text is computed, then left out) and cuts `consider` lines to 60 characters, so tmg scanned the
// whole store a second time (plur_recall) for their words on every prompt. Here the answer's
// `directives` carries them all, whole, in PLUR's own order (constraints, directives, consider),
// one `[ID] statement` line each; what PLUR selected, and `injected_ids`, are unchanged.
function wholeWords(proto) {
  if (typeof proto._formatInjection !== "function" || typeof proto._loadAllEngrams !== "function") return;
  const format = proto._formatInjection;
  const terminators = /\s*[\r\n\u2028\u2029\u0085]+\s*/g;
  proto._formatInjection = async function (...args) {
    const result = await format.apply(this, args);
    if (typeof result?.consider !== "string" || typeof result.directives !== "string") return result;
    const lines = result.consider ? result.consider.split("\n") : [];
    const wanted = new Map(); // id -> its consider line's index
    lines.forEach((line, i) => {
      const id = /^\[([^\]\s]+)\]/.exec(line)?.[1];
      if (id) wanted.set(id, i);
    });
    const whole = new Map(); // index -> the line with the whole statement
    if (wanted.size > 0) {
      for (const e of await this._loadAllEngrams()) { // PLUR's cached parse: the file is not read again
        const i = wanted.get(e.id);
        if (i === undefined || typeof e.statement !== "string") continue;
        whole.set(i, `[${e.id}] ${e.statement.replace(terminators, " ").trim()}`);
        if (whole.size === wanted.size) break;
      }
    }
    // A line not found there (a remote store's engram) stays in `consider`, cut: tmg recalls it.
    const moved = lines.flatMap((_line, i) => (whole.has(i) ? [whole.get(i)] : []));
    const directives = [result.constraints, result.directives, ...moved].filter((t) => typeof t === "string" && t);
    return { ...result, directives: directives.join("\n"), constraints: "",
             consider: lines.filter((_line, i) => !whole.has(i)).join("\n") };
  };
}

const core = coreEntry(entry);
const Plur = core ? (await import(pathToFileURL(core).href)).Plur : undefined;
const proto = Plur?.prototype;
if (proto && typeof proto._reactivateResults === "function" && typeof proto._appendHistory === "function") {
  proto._reactivateResults = async function () {};
  const append = proto._appendHistory;
  // Without its co_injection line an inject skips its injection_count rewrite too (PLUR's own branch).
  proto._appendHistory = function (event) {
    return event && event.event === "co_injection" ? false : append.call(this, event);
  };
  wholeWords(proto);
  process.stderr.write("tmg: reader-patched\n");
} else {
  process.stderr.write("tmg: reader-unpatched (this PLUR has no _reactivateResults/_appendHistory)\n");
}
await import(pathToFileURL(entry).href);
