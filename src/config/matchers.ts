// Compiles token allowlists into matchers built once per config: `allow_ips` into a
// net.BlockList lookup, `models` into a Set of exact names plus one glob RegExp.

import { BlockList, isIP } from "node:net";
import type { IpMatcher, NameMatcher } from "../runtime/types.js";

/** One `allow_ips` entry: an address, or a CIDR range when `prefix` is set. */
export interface IpRule {
  address: string;
  family: "ipv4" | "ipv6";
  prefix?: number;
}

/** Parses "198.51.100.7", "203.0.113.0/24", "2001:db8::1" or "2001:db8::/32"; throws if invalid. */
export function parseIpRule(text: string): IpRule {
  const [address, prefixText, extra] = text.trim().split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) {
    throw new Error(`invalid address "${text}": write an IPv4 or IPv6 address or CIDR range, e.g. 203.0.113.0/24`);
  }
  const family = version === 4 ? "ipv4" : "ipv6";
  if (prefixText === undefined) return { address, family };
  const max = version === 4 ? 32 : 128;
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) {
    throw new Error(`invalid CIDR "${text}": the prefix length must be 0 to ${max}`);
  }
  return { address, family, prefix };
}

const mappedV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * Builds an IP allowlist matcher. Client addresses in IPv4-mapped IPv6 form
 * (::ffff:203.0.113.5, as node reports IPv4 peers on a dual-stack socket) match IPv4 rules.
 */
export function compileIpMatcher(rules: readonly string[]): IpMatcher {
  const list = new BlockList();
  for (const text of rules) {
    const rule = parseIpRule(text);
    if (rule.prefix === undefined) list.addAddress(rule.address, rule.family);
    else list.addSubnet(rule.address, rule.prefix, rule.family);
  }
  return (ip: string): boolean => {
    const mapped = mappedV4.exec(ip);
    const address = mapped ? mapped[1] : ip;
    const version = isIP(address);
    if (version === 0) return false;
    return list.check(address, version === 4 ? "ipv4" : "ipv6");
  };
}

/** True when a name pattern holds a glob character (* or ?). */
export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

function globSource(pattern: string): string {
  return pattern
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
}

/** Builds a name matcher from exact names and globs (`*` any run, `?` one character). */
export function compileNameMatcher(patterns: readonly string[]): NameMatcher {
  const exact = new Set(patterns.filter((p) => !isGlob(p)));
  const globs = patterns.filter(isGlob);
  const regex = globs.length ? new RegExp(`^(?:${globs.map(globSource).join("|")})$`, "s") : undefined;
  return (name: string): boolean => exact.has(name) || (regex !== undefined && regex.test(name));
}
