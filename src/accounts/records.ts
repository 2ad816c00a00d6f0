// What every accounts store does alike: applying a patch to a record, bounding a page, and
// the audit log's view of a record (money as exact decimals, never a key hash).

import { formatNano } from "../billing/cost.js";
import type { AccountSettings, CodeBatch, CreditEntry, NewToken, NewUser, StoredToken, StoredUser, TokenPatch, UserPatch } from "./store.js";

/** Default and largest page of a list. */
export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isInteger(limit) || limit < 1) return DEFAULT_PAGE;
  return Math.min(limit, MAX_PAGE);
}

/** A user as created at `now`: defaults filled, version 1. */
export function newUserRecord(user: NewUser, now: number): StoredUser {
  const settings = settingsOrNone(user.settings);
  return {
    name: user.name, status: user.status ?? "active", groups: [...(user.groups ?? [])],
    ...(user.note === undefined ? {} : { note: user.note }),
    ...(settings === undefined ? {} : { settings }),
    createdAt: now, updatedAt: now, version: 1,
  };
}

/** A token as created at `now`: defaults filled, version 1. */
export function newTokenRecord(token: NewToken, now: number): StoredToken {
  const settings = settingsOrNone(token.settings);
  return {
    name: token.name, keyHash: token.keyHash, ...(token.keyHint === undefined ? {} : { keyHint: token.keyHint }),
    user: token.user, group: token.group, status: token.status ?? "active",
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
    ...(token.quotaNano === undefined ? {} : { quotaNano: token.quotaNano }),
    ...(token.allowIps === undefined ? {} : { allowIps: [...token.allowIps] }),
    ...(token.models === undefined ? {} : { models: [...token.models] }),
    ...(settings === undefined ? {} : { settings }),
    createdAt: now, updatedAt: now, version: 1,
  };
}

/** The user after `patch`, one version on. */
export function patchUser(before: StoredUser, patch: UserPatch, now: number): StoredUser {
  const { note: _note, settings: _settings, ...rest } = before;
  const note = patch.note === undefined ? before.note : patch.note ?? undefined;
  const settings = patch.settings === undefined ? before.settings : settingsOrNone(patch.settings);
  return {
    ...rest,
    ...(patch.status === undefined ? {} : { status: patch.status }),
    ...(patch.groups === undefined ? {} : { groups: [...patch.groups] }),
    ...(note === undefined ? {} : { note }),
    ...(settings === undefined ? {} : { settings }),
    updatedAt: now, version: before.version + 1,
  };
}

/** Settings worth keeping: undefined for null or an object that sets nothing. */
export function settingsOrNone(settings: AccountSettings | null | undefined): AccountSettings | undefined {
  if (!settings) return undefined;
  const kept: AccountSettings = {
    ...(settings.plan === undefined ? {} : { plan: settings.plan }),
    ...(settings.limits === undefined ? {} : { limits: settings.limits }),
    ...(settings.budgets === undefined ? {} : { budgets: settings.budgets }),
  };
  return Object.keys(kept).length === 0 ? undefined : kept;
}

/** The token after `patch`, one version on; null removes a setting. */
export function patchToken(before: StoredToken, patch: TokenPatch, now: number): StoredToken {
  const { expiresAt, quotaNano, allowIps, models, settings, ...rest } = before;
  const pick = <T>(next: T | null | undefined, current: T | undefined): T | undefined => (next === undefined ? current : next ?? undefined);
  const after = {
    ...rest,
    ...(patch.status === undefined ? {} : { status: patch.status }),
    ...(patch.group === undefined ? {} : { group: patch.group }),
    expiresAt: pick(patch.expiresAt, expiresAt),
    quotaNano: pick(patch.quotaNano, quotaNano),
    allowIps: pick(patch.allowIps, allowIps),
    models: pick(patch.models, models),
    settings: patch.settings === undefined ? settings : settingsOrNone(patch.settings),
    updatedAt: now, version: before.version + 1,
  };
  for (const key of ["expiresAt", "quotaNano", "allowIps", "models", "settings"] as const) if (after[key] === undefined) delete after[key];
  return after;
}

/** JSON-safe views for the audit log: bigint money as exact decimals, key hashes left out. */
export const auditView = {
  of(value: unknown): unknown {
    if (value === null || typeof value !== "object") return typeof value === "bigint" ? formatNano(value) : value;
    if (Array.isArray(value)) return value.map((v) => auditView.of(v));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "keyHash" || v === undefined) continue;
      out[k] = auditView.of(v);
    }
    return out;
  },
  credit(entry: CreditEntry): unknown {
    return auditView.of(entry);
  },
  batch(batch: CodeBatch): unknown {
    return auditView.of(batch);
  },
};
