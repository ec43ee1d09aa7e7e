// The broker's read process of PLUR: `node plur_reader.mjs <@plur-ai/mcp entry> [args...]`.
//
// It is the real server (the entry is imported and serves stdio as it always does), with three
// changes: its reads do not write, its inject answers with every selected engram's words
// (wholeWords, below), and its inject scores only the engrams that can score (scoreOnlyCandidates,
// below: the same answer, without tokenising the whole store per prompt). First, the reads: PLUR
// 0.20.0 reinforces what `plur_inject*` and `plur_recall` return (activation, co-access,
// injection_count, a co_injection history line) by rewriting the whole engrams.yaml on every read,
// which also throws its parsed copy away: at a year of use every prompt paid a YAML dump and a YAML
// parse of the store. Here those steps are skipped, so the parsed store stays cached until
// something else changes the file; the broker replays the same reads on PLUR's writer process when
// the store is idle (tmg/broker/reinforce.py), so the reinforcement still lands, in PLUR's own
// code, off every prompt's path.
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
      return { path: join(dirname(manifest), target), version: pkg.version };
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

// Only the engrams that can score, for inject's selection. PLUR's `selectAndSpread` tokenises the
// statement of every engram in the store and copies every one that shares a word with the prompt,
// on every inject (most of an inject's time at 5 years of use). An engram whose words meet none of
// the prompt's scores 0 there and is dropped unless pinned, so here `_formatInjection`'s one load
// of the store (`this._loadAllEngrams()`, called before its first await) returns only the engrams
// that can matter to its answer, in the store's order (ties in PLUR's stable sort keep it):
// - every engram not `status: "active"` (PLUR counts a spread to one as retired, not unresolvable),
// - every pinned one (selected for any prompt),
// - every engram whose words meet the prompt's: its statement's (PLUR's own tokenisation: lower-case,
//   split on \W+, longer than 2), its tags' (lower-cased, whole), its domain's parts (split on . and
//   /, lower-cased): the three ways `scoreEngram` counts a hit for an engram of the user's store,
// - every engram one of those points to (`associations` to an engram, `relations.broader/narrower/
//   related`): spreading reaches one hop, and looks its targets up among the loaded engrams,
// - anything this cannot read the words of (an odd statement, tags or domain): PLUR's own code
//   says what it makes of it; an odd association list, and the filter is not used at all.
// An engram's words are computed once (kept beside the parsed object, computed again if its
// statement, tags or domain changed) and indexed, word -> engrams, once per parse of the store
// (indexFor), so a prompt costs a look-up per word and a pass over the list. The filter stands
// aside when the answer can rank engrams with no word in common (embedding boosts, a remote
// store's candidates) and for packs (loaded on their own, not through this list). It is checked
// against PLUR 0.20.0's selection only; another version is run without it. `TMG_READER_FILTER=0`
// turns it off (the parity tests compare both); `TMG_READER_FILTER=trace` says on stderr how many
// engrams each inject was given.
const FILTER_CHECKED = new Set(["0.20.0"]);
const TRACE = process.env.TMG_READER_FILTER === "trace";
const wordsKept = new WeakMap(); // engram -> { statement, tags, domain, words }

function sameTags(kept, tags) {
  if (kept.length !== tags.length) return false;
  for (let i = 0; i < tags.length; i++) if (kept[i] !== tags[i]) return false;
  return true;
}

// The words an engram can be met by (or null if this cannot read them), computed once per object.
function engramWords(engram) {
  const { statement, tags, domain } = engram;
  const kept = wordsKept.get(engram);
  if (kept && kept.statement === statement && kept.domain === domain && Array.isArray(tags)
      && sameTags(kept.tags, tags)) return kept.words;
  if (typeof statement !== "string" || !Array.isArray(tags) || tags.some((t) => typeof t !== "string")
      || (domain && typeof domain !== "string")) return null;
  const words = new Set(statement.toLowerCase().split(/\W+/).filter((w) => w.length > 2));
  for (const tag of tags) words.add(tag.toLowerCase());
  if (domain) for (const part of domain.split(/[./]/)) words.add(part.toLowerCase());
  wordsKept.set(engram, { statement, tags: [...tags], domain, words });
  return words;
}

// A word -> positions index of the last list seen. PLUR hands the primary store's parsed objects
// back unchanged until its file changes, so the index holds while every position has the same
// object with the same statement, tags and domain; anything else (a new parse, an engram changed
// in place, a list of another length) builds it again, from the words kept per object. A
// configured store's engrams are copied on every load (`_originalId`) and packs' too (`_pack`):
// their positions are read one by one on each call instead.
let index = null; // { engrams, statements, tags, domains, words: Map<word, number[]>, loose: number[] }

function looseEngram(e) {
  return e === null || typeof e !== "object" || e._originalId !== undefined || e._pack !== undefined;
}

function indexFor(all) {
  if (index && index.engrams.length === all.length) {
    const { engrams, statements, tags, domains } = index;
    let same = true;
    for (let i = 0; i < all.length && same; i++) {
      const e = all[i];
      if (engrams[i] === null) same = looseEngram(e);
      else same = e === engrams[i] && e.statement === statements[i] && e.domain === domains[i]
        && Array.isArray(e.tags) && sameTags(tags[i], e.tags);
    }
    if (same) return index;
  }
  const n = all.length;
  const built = { engrams: new Array(n), statements: new Array(n), tags: new Array(n), domains: new Array(n),
                  words: new Map(), loose: [] };
  for (let i = 0; i < n; i++) {
    const e = all[i];
    const words = looseEngram(e) ? null : engramWords(e);
    if (words === null) {
      built.engrams[i] = null;
      built.loose.push(i);
      continue;
    }
    built.engrams[i] = e;
    built.statements[i] = e.statement;
    built.tags[i] = [...e.tags];
    built.domains[i] = e.domain;
    for (const word of words) {
      const at = built.words.get(word);
      if (at) at.push(i);
      else built.words.set(word, [i]);
    }
  }
  index = built;
  return built;
}

// The ids `engram` can spread to, or null when its lists are not what PLUR's spreading reads.
function spreadTargets(engram, into) {
  const { associations, relations } = engram;
  if (associations != null) {
    if (!Array.isArray(associations)) return null;
    for (const assoc of associations) {
      if (assoc == null || typeof assoc !== "object") return null;
      if (assoc.target_type === "engram") into.add(assoc.target);
    }
  }
  if (relations != null) {
    if (typeof relations !== "object") return null;
    for (const ids of [relations.broader, relations.narrower, relations.related]) {
      if (ids === undefined) continue;
      if (!Array.isArray(ids)) return null;
      for (const id of ids) into.add(id);
    }
  }
  return into;
}

// `all`'s engrams that can matter to an inject for `task`, in their order (`all` itself if unsure).
function candidates(all, task) {
  if (!Array.isArray(all)) return all;
  const promptWords = [...new Set(task.toLowerCase().split(/\W+/).filter((w) => w.length > 2))];
  const { words, loose } = indexFor(all);
  const keep = new Uint8Array(all.length);
  for (const word of promptWords) for (const i of words.get(word) ?? []) keep[i] = 1;
  for (const i of loose) {
    const e = all[i];
    const met = looseEngram(e) && e !== null && typeof e === "object" && e._pack === undefined
      ? engramWords(e) : null; // a configured store's copy: its words, read now
    keep[i] = met === null || promptWords.some((w) => met.has(w)) ? 1 : 0;
  }
  const targets = new Set();
  for (let i = 0; i < all.length; i++) {
    const e = all[i];
    if (!keep[i]) {
      if (e.status !== "active" || e.pinned === true) keep[i] = 1;
      else continue;
    }
    if (e !== null && typeof e === "object" && spreadTargets(e, targets) === null) return all;
  }
  if (targets.size > 0) {
    for (let i = 0; i < all.length; i++) if (!keep[i] && targets.has(all[i].id)) keep[i] = 1;
  }
  return all.filter((_e, i) => keep[i] === 1);
}

function scoreOnlyCandidates(proto) {
  if (typeof proto._formatInjection !== "function" || typeof proto._loadAllEngrams !== "function") return false;
  const format = proto._formatInjection;
  proto._formatInjection = function (task, options, embeddingBoosts, remote) {
    const boosted = embeddingBoosts != null && !(embeddingBoosts instanceof Map && embeddingBoosts.size === 0);
    const remoteCandidates = remote != null && !(Array.isArray(remote.engrams) && remote.engrams.length === 0);
    if (typeof task !== "string" || boosted || remoteCandidates) return format.apply(this, arguments);
    // PLUR's first statement loads the store: for that one synchronous call, and only this
    // call's, the load answers the candidates; every other load (its own later ones, wholeWords'
    // consider lines, a concurrent inject's) is PLUR's own.
    const own = Object.getOwnPropertyDescriptor(this, "_loadAllEngrams");
    const load = this._loadAllEngrams;
    let used = false;
    this._loadAllEngrams = function (...args) {
      if (used) return load.apply(this, args);
      used = true;
      return Promise.resolve(load.apply(this, args)).then((all) => {
        const some = candidates(all, task);
        if (TRACE) process.stderr.write(`tmg: inject scored ${some.length} of ${all.length} engrams\n`);
        return some;
      });
    };
    try {
      return format.apply(this, arguments);
    } finally {
      if (own) Object.defineProperty(this, "_loadAllEngrams", own);
      else delete this._loadAllEngrams;
    }
  };
  return true;
}

const core = coreEntry(entry);
const Plur = core ? (await import(pathToFileURL(core.path).href)).Plur : undefined;
const proto = Plur?.prototype;
if (proto && typeof proto._reactivateResults === "function" && typeof proto._appendHistory === "function") {
  proto._reactivateResults = async function () {};
  const append = proto._appendHistory;
  // Without its co_injection line an inject skips its injection_count rewrite too (PLUR's own branch).
  proto._appendHistory = function (event) {
    return event && event.event === "co_injection" ? false : append.call(this, event);
  };
  const filtered = process.env.TMG_READER_FILTER !== "0" && FILTER_CHECKED.has(core.version)
    && scoreOnlyCandidates(proto); // inside wholeWords, which loads the store again after it
  wholeWords(proto);
  process.stderr.write(`tmg: reader-patched${filtered ? "" : " (inject scores every engram)"}\n`);
} else {
  process.stderr.write("tmg: reader-unpatched (this PLUR has no _reactivateResults/_appendHistory)\n");
}
await import(pathToFileURL(entry).href);
