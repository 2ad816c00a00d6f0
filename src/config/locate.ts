// Key paths in gateway.yaml: how they print (`tokens[0].user`) and where they sit in the
// parsed YAML document, so every error can point at file:line:col.

import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Scalar } from "yaml";

/** A path of keys and list indexes from the document root, e.g. ["tokens", 0, "user"]. */
export type KeyPath = readonly (string | number)[];

/** A problem found before positions are known: where (by path) and what. */
export interface RawIssue {
  path: KeyPath;
  message: string;
  /** "key": point at the key itself (unknown keys); default: at the value. */
  at?: "key" | "value";
}

/** Formats a path the way a reader finds it in the file: `channels[1].models[2]`. */
export function formatPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

type Visit = (scalar: Scalar, path: KeyPath, role: "key" | "value") => void;

/** Calls `visit` for every scalar of the document with its key path (aliases not followed). */
export function walkScalars(node: unknown, visit: Visit, path: KeyPath = []): void {
  if (isScalar(node)) {
    visit(node, path, "value");
  } else if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key : undefined;
      if (key) visit(key, path, "key");
      walkScalars(pair.value, visit, [...path, key ? String(key.value) : "?"]);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => walkScalars(item, visit, [...path, index]));
  }
}

function startOf(node: unknown): number | undefined {
  if (node && typeof node === "object" && "range" in node) {
    const range = (node as { range?: [number, number, number] | null }).range;
    if (range) return range[0];
  }
  return undefined;
}

/** Source offset of the node at `path`, or of its nearest existing ancestor. */
export function offsetOf(doc: Document, path: KeyPath, at: "key" | "value" = "value"): number {
  let node: unknown = doc.contents;
  let best = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    if (isAlias(node)) node = node.resolve(doc);
    const segment = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) return best;
      const keyStart = startOf(pair.key);
      if (at === "key" && i === path.length - 1) return keyStart ?? best;
      node = pair.value;
      best = startOf(node) ?? keyStart ?? best;
    } else if (isSeq(node) && typeof segment === "number" && segment < node.items.length) {
      node = node.items[segment];
      best = startOf(node) ?? best;
    } else {
      return best;
    }
  }
  return best;
}

function contains(node: unknown, offset: number): boolean {
  const range = node && typeof node === "object" ? (node as { range?: [number, number, number] | null }).range : undefined;
  return !!range && range[0] <= offset && offset <= range[1];
}

/** The deepest key path whose node spans `offset` (for YAML syntax errors). */
export function pathAt(doc: Document, offset: number): KeyPath {
  const path: (string | number)[] = [];
  let node: unknown = doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => {
        const start = startOf(p.key);
        const end = contains(p.value, offset) ? offset : ((p.key as { range?: number[] } | null)?.range?.[1] ?? -1);
        return start !== undefined && start <= offset && offset <= end;
      });
      if (!pair || !isScalar(pair.key)) return path;
      path.push(String(pair.key.value));
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => contains(item, offset));
      if (index < 0) return path;
      path.push(index);
      node = node.items[index];
    } else {
      return path;
    }
  }
}

/** 1-based line and column of `path` in the document. */
export function positionOf(
  doc: Document,
  lines: LineCounter,
  path: KeyPath,
  at: "key" | "value" = "value",
): { line: number; column: number } {
  const { line, col } = lines.linePos(offsetOf(doc, path, at));
  return { line: Math.max(line, 1), column: Math.max(col, 1) };
}
