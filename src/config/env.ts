// ${VAR} and ${VAR:-default} in gateway.yaml values. References are masked before YAML
// parsing (same length, so positions hold and `[${KEY}]` stays valid flow YAML), then
// expanded in each scalar value. Substitution always yields a string.

import { isScalar, type Document } from "yaml";
import { walkScalars, type RawIssue } from "./locate.js";

const MARK = "\uE000";
const PAD = "\uE001";
const DIGIT0 = 0xe100;
const BASE = 0x1000;

/** `${…}` or the escaped `$${…}`, on one line. */
const referencePattern = /\$?\$\{[^}\r\n]*\}/g;
const placeholderPattern = /\uE000([\uE100-\uF0FF])([\uE100-\uF0FF])\uE001*/g;

/** Source text with every reference replaced by a placeholder of the same length. */
export interface MaskedSource {
  text: string;
  references: string[];
}

/** Replaces each `${…}` with a same-length placeholder that YAML reads as plain text. */
export function maskReferences(source: string): MaskedSource {
  const references: string[] = [];
  const text = source.replace(referencePattern, (match) => {
    const index = references.push(match) - 1;
    if (index >= BASE * BASE) return match;
    const digits = String.fromCharCode(DIGIT0 + Math.floor(index / BASE), DIGIT0 + (index % BASE));
    return MARK + digits + PAD.repeat(match.length - 3);
  });
  return { text, references };
}

/** Puts the references back into a value read from masked text. */
export function unmask(value: string, references: readonly string[]): string {
  return value.replace(placeholderPattern, (_m, hi: string, lo: string) => {
    const index = (hi.charCodeAt(0) - DIGIT0) * BASE + (lo.charCodeAt(0) - DIGIT0);
    return references[index] ?? "";
  });
}

/** Outcome of expanding one string: the value and the problems found in it. */
export interface Expansion {
  value: string;
  problems: string[];
}

/**
 * Expands `${VAR}` (error when VAR is unset), `${VAR:-default}` (default when VAR is unset
 * or empty) and `$${` (a literal `${`) in one string.
 */
export function expand(text: string, env: NodeJS.ProcessEnv): Expansion {
  const problems: string[] = [];
  const value = text.replace(/\$\$\{|\$\{([^}]*)\}/g, (match, body: string | undefined) => {
    if (body === undefined) return "${";
    const ref = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/.exec(body);
    if (!ref) {
      problems.push(`invalid reference "${match}": write \${NAME} or \${NAME:-default} (NAME: letters, digits, _)`);
      return "";
    }
    const [, name, fallback] = ref;
    const current = env[name];
    if (fallback !== undefined) return current === undefined || current === "" ? fallback : current;
    if (current === undefined) {
      problems.push(`environment variable ${name} is not set (write \${${name}:-} to allow it to be unset)`);
      return "";
    }
    return current;
  });
  return { value, problems };
}

/**
 * Restores masked references in every scalar of `doc` and expands them in values (keys
 * are restored, not expanded). Returns one issue per problem, at the value's path.
 */
export function substituteEnv(doc: Document, references: readonly string[], env: NodeJS.ProcessEnv): RawIssue[] {
  const issues: RawIssue[] = [];
  walkScalars(doc.contents, (scalar, path, role) => {
    if (!isScalar(scalar) || typeof scalar.value !== "string") return;
    const restored = references.length ? unmask(scalar.value, references) : scalar.value;
    if (role === "key") {
      scalar.value = restored;
      return;
    }
    const { value, problems } = expand(restored, env);
    scalar.value = value;
    for (const message of problems) issues.push({ path, message });
  });
  return issues;
}
