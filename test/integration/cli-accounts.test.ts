// The account commands (`gateway users|credit|tokens|codes|audit`) run as the CLI runs them
// (flags parsed, exit codes, output), on a memory accounts store shared by the invocations
// and a usage log that says what was spent: users with credit and balance, the ledger with
// idempotency, tokens whose key is shown once and nowhere after, code batches on stdout or
// in a 0600 file, and the audit log of it all. The end-to-end run against a config's SQLite
// store is added once the SQLite accounts store has landed.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryAccountStore } from "../../src/accounts/memory-store.js";
import { accountsOn, type AccountsOpener } from "../../src/cli/accounts-cli.js";
import { auditCommand } from "../../src/cli/audit.js";
import { codesCommand } from "../../src/cli/codes.js";
import { runCommand, type Command } from "../../src/cli/command.js";
import { creditCommand } from "../../src/cli/credit.js";
import { main } from "../../src/cli/main.js";
import { tokensCommand } from "../../src/cli/tokens.js";
import { usersCommand } from "../../src/cli/users.js";
import { compileSource } from "../../src/config/index.js";
import { sha256Hex } from "../../src/config/hash.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import { entry } from "../helpers/usage-entry.js";

const yaml = `
server: { listen: "127.0.0.1:0" }
plans: { pro: { groups: [vip], limits: { concurrent: 4 } } }
groups: { default: { multiplier: 1 }, vip: { multiplier: 2 } }
users: { alice: { credit: 1, groups: [default] } }
tokens: [ { name: alice-main, key: sk-gw-test-alice-0123456789, user: alice, group: default } ]
channels: []
models: { gpt-4o-mini: { endpoint: chat, price: { input: 1, output: 1 } } }
`;

interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

describe("gateway users|credit|tokens|codes|audit", () => {
  const runtime = compileSource(yaml, { path: "test.yaml", env: {}, generation: 1 }).runtime;
  const store = new MemoryAccountStore();
  const usageLog = new StoreUsageLog(createMemoryStore());
  let opened = 0;
  let closed = 0;
  const open: AccountsOpener = async () => {
    opened++;
    return accountsOn({
      store, runtime, actor: { actor: "cli:tester" },
      spend: { spentByUser: (u) => usageLog.spentByUser(u), spentByToken: (t) => usageLog.spentByToken(t) },
      close: async () => void closed++,
    });
  };
  const commands: Command[] = [usersCommand(open), creditCommand(open), tokensCommand(open), codesCommand(open), auditCommand(open)];
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cli-accounts-"));
  });
  after(async () => {
    await usageLog.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function gateway(...argv: string[]): Promise<Ran> {
    let out = "";
    let err = "";
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
    const command = commands.find((c) => c.name === argv[0]);
    assert.ok(command, argv[0]);
    const code = await runCommand(command, argv.slice(1), io);
    return { code, out, err };
  }

  const ok = async (...argv: string[]): Promise<Ran> => {
    const ran = await gateway(...argv);
    assert.equal(ran.code, 0, `${argv.join(" ")}: ${ran.err}`);
    return ran;
  };

  test("users create: a stored user with groups, an opening grant and a note; refusals exit 1, bad flags 2", async () => {
    const created = await ok("users", "create", "bob", "--group", "default,vip", "--credit", "10", "--note", "bob@example.com");
    assert.match(created.out, /^user bob created$/m);
    assert.match(created.out, /^credit: +10$/m);
    assert.match(created.out, /^groups: +default, vip$/m);
    assert.equal((await store.user("bob"))?.note, "bob@example.com");
    assert.equal(await store.creditOf("bob"), 10_000_000_000n);

    const taken = await gateway("users", "create", "alice");
    assert.equal(taken.code, 1);
    assert.match(taken.err, /user 'alice' exists already in gateway\.yaml/);
    const group = await gateway("users", "create", "carol", "--group", "gold");
    assert.equal(group.code, 1);
    assert.match(group.err, /groups: no group 'gold'/);
    const again = await gateway("users", "create", "bob");
    assert.equal(again.code, 1);
    assert.match(again.err, /user 'bob' exists already/);

    const opens = opened;
    for (const argv of [["users", "create", "carol", "--credit", "1.x"], ["users", "create"], ["users", "create", "a", "b"], ["users"]]) {
      const bad = await gateway(...argv);
      assert.equal(bad.code, 2, argv.join(" "));
      assert.match(bad.err, /^gateway: /);
    }
    assert.equal(opened, opens, "bad command lines open nothing");
    assert.equal(closed, opened, "every opened store is closed");
  });

  test("users list and show: stored and gateway.yaml users, credit − spent = balance, reserved said to be unknown", async () => {
    await usageLog.append(entry({ requestId: "r-bob-1", user: "bob", token: "bob-old", costNano: 2_500_000_000n }));
    await usageLog.flush();
    const list = await ok("users", "list");
    const rows = list.out.split("\n");
    assert.match(rows[0], /^NAME +SOURCE +STATUS +GROUPS +CREDIT +SPENT +BALANCE$/);
    assert.match(list.out, /^alice +gateway\.yaml +active +default +1 +0 +1$/m);
    assert.match(list.out, /^bob +store +active +default,vip +10 +2\.5 +7\.5$/m);
    assert.match(list.out, /reserved: unknown here/);

    const json = (await ok("users", "list", "--prefix", "b", "--json")).out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(json.map((u) => [u.name, u.credit, u.spent, u.balance, u.reserved]), [["bob", "10", "2.5", "7.5", undefined]]);
    assert.equal((await ok("users", "list", "--limit", "1")).out.split("\n").filter((l) => /^(alice|bob) /.test(l)).length, 1);

    const show = await ok("users", "show", "bob");
    assert.match(show.out, /^balance: +7\.5 \(credit − spent\)$/m);
    assert.match(show.out, /^reserved: +unknown here/m);
    assert.match(show.out, /^note: +bob@example\.com$/m);
    const missing = await gateway("users", "show", "ghost");
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "gateway users show: no user 'ghost'\n");
  });

  test("users disable and enable a stored user; a gateway.yaml user is changed in the file", async () => {
    assert.equal((await ok("users", "disable", "bob")).out, "user bob disabled\n");
    assert.equal((await store.user("bob"))?.status, "disabled");
    assert.equal((await ok("users", "enable", "bob")).out, "user bob enabled\n");
    assert.equal((await store.user("bob"))?.status, "active");
    const declared = await gateway("users", "disable", "alice");
    assert.equal(declared.code, 1);
    assert.match(declared.err, /declared in gateway\.yaml: change it there/);
  });

  test("users plan and unplan: a stored user on a plan gateway.yaml declares, and off it; an unknown plan is refused", async () => {
    assert.equal((await ok("users", "plan", "bob", "pro")).out, "user bob is on plan pro\n");
    assert.equal((await store.user("bob"))?.settings?.plan, "pro");
    const unknown = await gateway("users", "plan", "bob", "gold");
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no plan 'gold'/);
    assert.equal((await ok("users", "unplan", "bob")).out, "user bob has no plan now\n");
    assert.equal((await store.user("bob"))?.settings, undefined);
  });

  test("credit add: grants, adjustments (after --), an idempotency key credits once; credit list shows the ledger", async () => {
    const first = await ok("credit", "add", "bob", "5", "--reason", "top-up", "--idempotency-key", "pay-1");
    assert.match(first.out, /^grant of 5 to bob recorded \(entry \d+\)$/m);
    assert.match(first.out, /^bob: credit 15, spent 2\.5, balance 12\.5$/m);
    const retried = await ok("credit", "add", "bob", "5", "--reason", "top-up", "--idempotency-key", "pay-1");
    assert.match(retried.out, /^nothing added: idempotency key 'pay-1' was used before/m);
    const mismatch = await gateway("credit", "add", "bob", "6", "--reason", "top-up", "--idempotency-key", "pay-1");
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.err, /idempotency_key 'pay-1' was used before for a different credit/);
    const down = await ok("credit", "add", "bob", "--reason", "double charge", "--", "-2.25");
    assert.match(down.out, /^adjustment of -2\.25 to bob recorded/m);
    assert.equal(await store.creditOf("bob"), 12_750_000_000n);
    await ok("credit", "add", "alice", "0.5", "--reason", "goodwill");
    assert.equal(await store.creditOf("alice"), 500_000_000n, "a gateway.yaml user's top-up goes to the ledger");

    const ghost = await gateway("credit", "add", "ghost", "5", "--reason", "x");
    assert.equal(ghost.code, 1);
    assert.match(ghost.err, /no user 'ghost'/);
    for (const argv of [["credit", "add", "bob", "5"], ["credit", "add", "bob", "five", "--reason", "x"], ["credit", "add", "bob", "0", "--reason", "x"]]) {
      assert.equal((await gateway(...argv)).code, 2, argv.join(" "));
    }

    const list = await ok("credit", "list", "bob");
    const lines = list.out.trimEnd().split("\n");
    assert.match(lines[0], /^ *ID +AT +KIND +AMOUNT +ACTOR +REASON +IDEMPOTENCY_KEY$/);
    assert.equal(lines.length, 4, "opening grant, top-up, adjustment");
    assert.match(lines[1], /adjustment +-2\.25 +cli:tester +double charge/);
    assert.match(lines[3], /grant +10 +cli:tester +opening grant/);
    const json = (await ok("credit", "list", "bob", "--json", "--limit", "2")).out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(json.map((e) => e.amount), ["-2.25", "5"]);
    assert.equal(json[1].idempotency_key, "pay-1");
  });

  test("tokens create prints the key once; the store keeps its hash; list, show and audit never show it", async () => {
    const created = await ok("tokens", "create", "bob-laptop", "--user", "bob", "--group", "vip", "--expires", "30d", "--quota", "2",
      "--allow-ip", "10.0.0.0/8,127.0.0.1", "--model", "gpt-4o-*");
    const key = /^ {2}(sk-gw-\S+)$/m.exec(created.out)?.[1];
    assert.ok(key, created.out);
    assert.match(created.out, /key \(shown once/);
    const stored = await store.token("bob-laptop");
    assert.equal(stored?.keyHash, sha256Hex(key));
    assert.deepEqual(stored?.allowIps, ["10.0.0.0/8", "127.0.0.1"]);
    assert.deepEqual(stored?.models, ["gpt-4o-*"]);
    assert.equal(stored?.quotaNano, 2_000_000_000n);
    assert.ok(stored?.expiresAt && Math.abs(stored.expiresAt - (Date.now() + 30 * 86_400_000)) < 60_000);

    const json = JSON.parse((await ok("tokens", "create", "bob-ci", "--user", "bob", "--group", "default", "--json")).out);
    assert.match(json.key, /^sk-gw-/);
    assert.equal(json.token.group, "default");

    const list = await ok("tokens", "list", "--user", "bob");
    assert.match(list.out, /^bob-ci +bob +default +active +sk-gw-/m);
    assert.match(list.out, /^bob-laptop +bob +vip +active +sk-gw-\S+ +\d{4}-\d\d-\d\dT\S+ +2$/m);
    const show = await ok("tokens", "show", "bob-laptop");
    assert.match(show.out, /^allow_ips: +10\.0\.0\.0\/8, 127\.0\.0\.1$/m);
    assert.match(show.out, /^spent: +0$/m);
    const yamlToken = await ok("tokens", "show", "alice-main");
    assert.match(yamlToken.out, /^source: +gateway\.yaml$/m);
    const audit = await ok("audit", "--json", "--limit", "1000");
    for (const text of [list.out, show.out, audit.out]) {
      assert.ok(!text.includes(key) && !text.includes(json.key), "a key is shown once");
      assert.ok(!text.includes(sha256Hex(key)), "never its hash");
    }

    const noGroup = await gateway("tokens", "create", "bob-x", "--user", "bob");
    assert.equal(noGroup.code, 1);
    assert.match(noGroup.err, /group: name one of user 'bob's groups \(default, vip\)/);
    const declared = await gateway("tokens", "create", "alice-x", "--user", "alice");
    assert.equal(declared.code, 1);
    assert.match(declared.err, /declared in gateway\.yaml/);
    const badIp = await gateway("tokens", "create", "bob-y", "--user", "bob", "--group", "vip", "--allow-ip", "10.0.0.300");
    assert.equal(badIp.code, 1);
    assert.match(badIp.err, /allow_ips/);
    for (const argv of [["tokens", "create", "bob-z"], ["tokens", "create", "bob-z", "--user", "bob", "--expires", "soon"],
      ["tokens", "create", "bob-z", "--user", "bob", "--quota", "-1"]]) {
      assert.equal((await gateway(...argv)).code, 2, argv.join(" "));
    }
  });

  test("tokens disable, enable and revoke; a revoked token stays revoked", async () => {
    assert.equal((await ok("tokens", "disable", "bob-ci")).out, "token bob-ci disabled\n");
    assert.equal((await store.token("bob-ci"))?.status, "disabled");
    assert.equal((await ok("tokens", "enable", "bob-ci")).out, "token bob-ci enabled\n");
    assert.equal((await ok("tokens", "revoke", "bob-ci")).out, "token bob-ci revoked\n");
    assert.equal((await ok("tokens", "revoke", "bob-ci")).out, "token bob-ci revoked\n", "revoking again changes nothing");
    const enable = await gateway("tokens", "enable", "bob-ci");
    assert.equal(enable.code, 1);
    assert.equal((await store.token("bob-ci"))?.status, "revoked");
    const declared = await gateway("tokens", "revoke", "alice-main");
    assert.equal(declared.code, 1);
    assert.match(declared.err, /declared in gateway\.yaml/);
  });

  test("codes create: one code a line on stdout, what the batch is on stderr; codes show counts redemptions", async () => {
    const made = await ok("codes", "create", "--count", "3", "--amount", "5.5", "--expires", "30d", "--batch", "promo");
    const codes = made.out.trim().split("\n");
    assert.equal(codes.length, 3);
    for (const code of codes) assert.match(code, /^gw-[A-Za-z0-9_-]{20,}$/);
    assert.match(made.err, /^batch promo: 3 codes of 5\.5 each, until \d{4}-/);
    assert.equal((await store.redeem(sha256Hex(codes[0]), "bob", { actor: "token:bob-laptop" }, Date.now())).ok, true);

    const show = await ok("codes", "show", "promo");
    assert.match(show.out, /^redeemed: +1 of 3$/m);
    assert.match(show.out, /^amount: +5\.5 each$/m);
    assert.ok(!codes.some((c) => show.out.includes(c)));
    const json = JSON.parse((await ok("codes", "show", "promo", "--json")).out);
    assert.equal(json.redeemed, 1);

    const missing = await gateway("codes", "show", "nope");
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no batch 'nope'/);
    const taken = await gateway("codes", "create", "--count", "1", "--amount", "1", "--expires", "1d", "--batch", "promo");
    assert.equal(taken.code, 1);
    assert.match(taken.err, /batch 'promo' exists already/);
    const past = await gateway("codes", "create", "--count", "1", "--amount", "1", "--expires", "2020-01-01");
    assert.equal(past.code, 1);
    assert.match(past.err, /expires: must be in the future/);
    for (const argv of [["codes", "create", "--amount", "1", "--expires", "1d"], ["codes", "create", "--count", "0", "--amount", "1", "--expires", "1d"],
      ["codes", "create", "--count", "10001", "--amount", "1", "--expires", "1d"], ["codes", "create", "--count", "1", "--amount", "-1", "--expires", "1d"]]) {
      assert.equal((await gateway(...argv)).code, 2, argv.join(" "));
    }
  });

  test("codes create --out FILE: a new file of mode 0600, nothing on stdout but where; an existing file is never written over", async () => {
    const file = join(dir, "codes.txt");
    const made = await ok("codes", "create", "--count", "2", "--amount", "1", "--expires", "2099-01-01", "--batch", "to-file", "--out", file);
    const codes = readFileSync(file, "utf8").trim().split("\n");
    assert.equal(codes.length, 2);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(made.out, /codes written to .*codes\.txt \(mode 0600\)/);
    assert.ok(!codes.some((c) => made.out.includes(c) || made.err.includes(c)));

    const existing = join(dir, "existing.txt");
    writeFileSync(existing, "keep me\n");
    const refused = await gateway("codes", "create", "--count", "2", "--amount", "1", "--expires", "1d", "--batch", "never", "--out", existing);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /exists already/);
    assert.equal(readFileSync(existing, "utf8"), "keep me\n");
    assert.equal(await store.codeBatch("never"), undefined, "no batch whose codes could not be kept");

    const unmade = join(dir, "unmade.txt");
    const failed = await gateway("codes", "create", "--count", "1", "--amount", "1", "--expires", "1d", "--batch", "to-file", "--out", unmade);
    assert.equal(failed.code, 1, "the batch name is taken");
    assert.ok(!existsSync(unmade), "the file opened for it is removed");
  });

  test("audit: every change with its actor, newest first, filtered by target and actor", async () => {
    const bob = await ok("audit", "--target", "bob");
    const lines = bob.out.trimEnd().split("\n");
    assert.match(lines[0], /^ *ID +AT +ACTOR +ACTION +TARGET +CHANGE$/);
    const actions = lines.slice(1).map((l) => /^ *\d+ +\S+ +(\S+) +(\S+) +bob\b/.exec(l)?.slice(1).join(" "));
    assert.deepEqual(actions, [
      "token:bob-laptop code.redeem", "cli:tester credit.add", "cli:tester credit.add",
      "cli:tester user.update", "cli:tester user.update", // unplan, plan
      "cli:tester user.update", "cli:tester user.update", // enable, disable
      "cli:tester credit.add", "cli:tester user.create",
    ]);
    assert.match(bob.out, /user\.update +bob +status: disabled → active/);
    assert.match(bob.out, /credit\.add +bob +amount=-2\.25 kind=adjustment reason=double charge/);

    const byCli = await ok("audit", "--actor", "cli:tester", "--limit", "2", "--json");
    const records = byCli.out.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(records.length, 2);
    assert.ok(records.every((r) => r.actor === "cli:tester"));
    assert.ok(records[0].id > records[1].id);
    assert.match(records[0].at, /^\d{4}-\d\d-\d\dT/);
    assert.equal((await ok("audit", "--target", "nobody")).out, "no audit records\n");
  });

  test("through main(): the commands are registered, and a config that cannot be read exits 1", async () => {
    let err = "";
    const io = { out: () => undefined, err: (t: string) => void (err += t) };
    assert.equal(await main(["users", "list", "--config", join(dir, "absent.yaml")], io), 1);
    assert.match(err, /absent\.yaml: cannot read the file/);
    assert.equal(await main(["tokens", "frob"], io), 2);
  });
});
