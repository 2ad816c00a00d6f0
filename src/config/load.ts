// Turns gateway.yaml text into a Runtime: parse (positions kept), substitute ${ENV},
// validate, cross-check, compile. Every problem is collected into one ConfigError.
// Large tokens and users sections are read by a fast path first (large-sections.ts); its
// problems are located by parsing only the entries they sit in. A file the fast reader
// does not take goes through the positioned parse of the whole file.

import { sha256Hex } from "./hash.js";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { compile, type CompileResult } from "./compile.js";
import { crossref } from "./crossref.js";
import { expand, maskReferences, substituteEnv, unmask } from "./env.js";
import { ConfigError, type ConfigIssue } from "./issues.js";
import { formatPath, offsetOf, pathAt, positionOf, type RawIssue } from "./locate.js";
import type { RawConfig } from "./raw.js";
import { schemaIssues } from "./schema.js";
import { entryRanges, readLargeSections, type LargeSections } from "./large-sections.js";

/** How to compile a config source. */
export interface SourceOptions {
  /** File name used in issues and as Runtime.sourcePath (resolved). */
  path: string;
  /** Variables for ${VAR}; default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Generation of the compiled Runtime; default 1. */
  generation?: number;
}

/** sha256 hex of config source text, as stored in Runtime.sourceHash. */
export function sourceHashOf(text: string): string {
  return sha256Hex(text);
}

/** Drops issues at a path an earlier stage already reported (one cause, one message). */
function merge(stages: RawIssue[][]): RawIssue[] {
  const merged: RawIssue[] = [];
  for (const stage of stages) {
    const taken = new Set(merged.map((i) => formatPath(i.path)));
    merged.push(...stage.filter((i) => !taken.has(formatPath(i.path))));
  }
  return merged;
}

function locateAll(file: string, doc: Document, lines: LineCounter, raw: RawIssue[]): ConfigIssue[] {
  return raw
    .map((issue) => ({ file, ...positionOf(doc, lines, issue.path, issue.at), path: formatPath(issue.path), message: issue.message }))
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Compiles config text synchronously; throws ConfigError listing every problem. */
export function compileSource(text: string, opts: SourceOptions): CompileResult {
  return compileFast(text, opts) ?? compileLocated(text, opts);
}

/**
 * True when some mapping repeats a key. The fast path parses without the parser's own
 * check (yaml's mapIncludes), which compares every key with every earlier one: quadratic
 * in a 10k-user map. Same rule: scalar keys with equal values, other keys by identity.
 */
function hasDuplicateKeys(node: unknown): boolean {
  if (isMap(node)) {
    const seen = new Set<unknown>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (seen.has(key)) return true;
      seen.add(key);
      if (hasDuplicateKeys(pair.key) || hasDuplicateKeys(pair.value)) return true;
    }
  } else if (isSeq(node)) {
    for (const item of node.items) if (hasDuplicateKeys(item)) return true;
  }
  return false;
}

/** True when the top-level map has one `key`, at `offset`, with no value. */
function emptyKeyAt(doc: Document, key: string, offset: number): boolean {
  if (!isMap(doc.contents)) return false;
  const pairs = doc.contents.items.filter((pair) => isScalar(pair.key) && pair.key.value === key);
  if (pairs.length !== 1) return false;
  const { key: node, value } = pairs[0];
  return isScalar(node) && node.range?.[0] === offset && (value === null || (isScalar(value) && value.value === null));
}

/** Restores and expands ${VAR} in every string of a fast-read value, in place; throws on a problem. */
function expandAll(value: unknown, references: readonly string[], env: NodeJS.ProcessEnv): unknown {
  if (typeof value === "string") {
    const restored = references.length ? unmask(value, references) : value;
    if (!restored.includes("$")) return restored;
    const { value: expanded, problems } = expand(restored, env);
    if (problems.length) throw new Error(problems[0]);
    return expanded;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = expandAll(value[i], references, env);
  } else if (value !== null && typeof value === "object") {
    const entry = value as Record<string, unknown>;
    for (const key of Object.keys(entry)) entry[key] = expandAll(entry[key], references, env);
  }
  return value;
}

/**
 * The fast path for a file with long tokens or users sections: those read line by line,
 * the rest by the YAML parser without positions. Throws ConfigError for schema and
 * cross-check problems it can locate; undefined when the file does not fit the fast
 * reader, has YAML or ${VAR} problems, or an issue it cannot locate: the located path
 * then reports them.
 */
function compileFast(text: string, opts: SourceOptions): CompileResult | undefined {
  const masked = maskReferences(text);
  const sections = readLargeSections(masked.text);
  if (!sections) return undefined;
  const doc = parseDocument(sections.rest, { prettyErrors: false, uniqueKeys: false, merge: true });
  if (doc.errors.length || hasDuplicateKeys(doc.contents)) return undefined;
  for (const [key, offset] of sections.keyOffsets) if (!emptyKeyAt(doc, key, offset)) return undefined;
  const env = opts.env ?? process.env;
  if (substituteEnv(doc, masked.references, env).length) return undefined;
  const data: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined;
  try {
    for (const [key, value] of sections.values) (data as Record<string, unknown>)[key] = expandAll(value, masked.references, env);
  } catch {
    return undefined;
  }
  const raw = data as RawConfig;
  const issues = merge([schemaIssues(data), crossref(raw, { sourcePath: opts.path })]);
  if (issues.length) {
    const located = locateCut(opts.path, masked.text, sections, doc, issues);
    if (!located) return undefined;
    throw new ConfigError(located);
  }
  return compile(raw, { sourcePath: resolve(opts.path), sourceHash: sourceHashOf(text), generation: opts.generation ?? 1 });
}

/** 1-based line and column of source offsets, as yaml's LineCounter gives them. */
function lineTable(text: string): (offset: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: Math.max(low + 1, 1), column: Math.max(offset - starts[low] + 1, 1) };
  };
}

/**
 * Locates the issues of a fast-read file without parsing it all with positions: an issue
 * inside a tokens or users entry by parsing that entry alone, any other by the parsed rest
 * (its offsets moved past the cut bodies). Undefined when one cannot be located this way.
 */
function locateCut(file: string, text: string, sections: LargeSections, rest: Document, issues: RawIssue[]): ConfigIssue[] | undefined {
  const position = lineTable(text);
  const ranges = new Map<string, Map<string | number, [number, number]>>();
  const entryDocs = new Map<string, Document>();
  const located: ConfigIssue[] = [];
  for (const issue of issues) {
    const [section, entry] = issue.path;
    const cut = sections.cuts.find((c) => c.key === section);
    let offset: number;
    if (cut) {
      if (entry === undefined) return undefined;
      if (!ranges.has(cut.key)) ranges.set(cut.key, entryRanges(text, cut));
      const range = ranges.get(cut.key)!.get(entry);
      if (!range) return undefined;
      const id = `${cut.key}\u0000${entry}`;
      let doc = entryDocs.get(id);
      if (!doc) {
        doc = parseDocument(text.slice(range[0], range[1]), { prettyErrors: false, uniqueKeys: true, merge: true });
        if (doc.errors.length) return undefined;
        entryDocs.set(id, doc);
      }
      offset = range[0] + offsetOf(doc, [cut.key === "tokens" ? 0 : entry, ...issue.path.slice(2)], issue.at);
    } else {
      offset = offsetOf(rest, issue.path, issue.at);
      let removed = 0;
      for (const c of sections.cuts) if (offset >= c.bodyStart - removed) removed += c.end - c.bodyStart;
      offset += removed;
    }
    located.push({ file, ...position(offset), path: formatPath(issue.path), message: issue.message });
  }
  return located.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** The general path: a positioned parse, so every issue names its line and column. */
function compileLocated(text: string, opts: SourceOptions): CompileResult {
  const file = opts.path;
  const lines = new LineCounter();
  const masked = maskReferences(text);
  const doc = parseDocument(masked.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length) {
    throw new ConfigError(
      doc.errors.map((error) => {
        const { line, col } = lines.linePos(error.pos[0]);
        const message = error.message.replace(/ at line \d+, column \d+[\s\S]*$/, "");
        return { file, line: Math.max(line, 1), column: Math.max(col, 1), path: formatPath(pathAt(doc, error.pos[0])), message };
      }),
    );
  }
  const envIssues = substituteEnv(doc, masked.references, opts.env ?? process.env);
  const data: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (data === null || data === undefined) {
    throw new ConfigError([{ file, line: 1, column: 1, path: "", message: "the file holds no settings (is it empty?)" }]);
  }
  const raw = data as RawConfig;
  const issues = merge([envIssues, schemaIssues(data), crossref(raw, { sourcePath: file })]);
  if (issues.length) throw new ConfigError(locateAll(file, doc, lines, issues));
  return compile(raw, { sourcePath: resolve(file), sourceHash: sourceHashOf(text), generation: opts.generation ?? 1 });
}

/** Reads and compiles a config file; a file that cannot be read is a ConfigError too. */
export async function loadConfigFile(
  path: string,
  opts: { env?: NodeJS.ProcessEnv; generation?: number } = {},
): Promise<CompileResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError([{ file: path, line: 0, column: 0, path: "", message: `cannot read the file: ${(error as Error).message}` }]);
  }
  return compileSource(text, { path, ...opts });
}
