// Turns gateway.yaml text into a Runtime: parse (positions kept), substitute ${ENV},
// validate, cross-check, compile. Every problem is collected into one ConfigError.

import { sha256Hex } from "./hash.js";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { LineCounter, parseDocument, type Document } from "yaml";
import { compile, type CompileResult } from "./compile.js";
import { crossref } from "./crossref.js";
import { maskReferences, substituteEnv } from "./env.js";
import { ConfigError, type ConfigIssue } from "./issues.js";
import { formatPath, pathAt, positionOf, type RawIssue } from "./locate.js";
import type { RawConfig } from "./raw.js";
import { schemaIssues } from "./schema.js";

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
