// Channels and their keys (named by fingerprint, never shown): each key's state, an operator
// taking one out with a reason or putting it back; with the gateway's stats and test
// endpoints, each key's error rate and p50/p95 latency over the last hour, and a test request.
import { useState } from "preact/hooks";
import { call, type Session } from "../../api.js";
import { formatTime } from "../../time.js";
import { keyStateText, ratePercent } from "./logic.js";
import { msOf } from "./list.js";
import { adminPath, isMissingEndpoint, messageOf, useAdmin, useOffers } from "./use-admin.js";

interface KeyView {
  readonly fingerprint: string;
  readonly state: string;
  readonly cooldown?: { readonly reason: string; readonly until: string };
  readonly taken_out?: { readonly reason: string; readonly actor: string; readonly at: string };
}
interface ChannelView {
  readonly channel: string;
  readonly enabled: boolean;
  readonly keys: readonly KeyView[];
}
interface KeyStats {
  readonly fingerprint: string | null;
  readonly requests: number;
  readonly errors: number;
  readonly error_rate: number | null;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
}
interface ChannelStats {
  readonly data: readonly { readonly channel: string; readonly keys: readonly KeyStats[] }[];
}
interface KeyTest {
  readonly ok: boolean;
  readonly model: string;
  readonly status?: number;
  readonly total_ms: number;
  readonly error_class?: string;
  readonly message?: string;
}

/** A latency as a person reads it: whole milliseconds, or "—" without requests. */
function millis(ms: number | null): string {
  return ms === null ? "—" : `${Math.round(ms)} ms`;
}

export function ChannelsPage({ session }: { session: Session }) {
  const [reloads, setReloads] = useState(0);
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  const [tests, setTests] = useState<Record<string, KeyTest | string>>({});
  const [testMissing, setTestMissing] = useState(false);
  const channels = useAdmin<{ data: ChannelView[] }>("channels", reloads);
  const offered = useOffers();
  const keyRoute = "/admin/v1/channels/{channel}/keys/{fingerprint}";
  const stats = useAdmin<ChannelStats>(offered?.("GET", "/admin/v1/channels/stats") ? "channels/stats?since=1h" : undefined, reloads);
  const canTest = offered?.("POST", `${keyRoute}/test`) === true && !testMissing;
  const statOf = (channel: string, fp: string): KeyStats | undefined =>
    stats.data?.data.find((c) => c.channel === channel)?.keys.find((k) => k.fingerprint === fp);
  const showStats = !stats.missing && stats.data !== undefined;

  const keyPath = (channel: string, fp: string) => adminPath(`channels/${encodeURIComponent(channel)}/keys/${encodeURIComponent(fp)}`);
  const id = (channel: string, fp: string) => `${channel}/${fp}`;

  const takeOut = async (channel: string, fp: string) => {
    const reason = (reasons[id(channel, fp)] ?? "").trim();
    if (!reason) return setMessage({ kind: "error", text: `Give a reason for taking ${fp} of ${channel} out.` });
    setMessage(undefined);
    try {
      await call("POST", `${keyPath(channel, fp)}/out`, { csrf: session.csrf, body: { reason } });
      setMessage({ kind: "done", text: `Key ${fp} of ${channel} taken out.` });
      setReasons({ ...reasons, [id(channel, fp)]: "" });
      setReloads((n) => n + 1);
    } catch (err) {
      setMessage({ kind: "error", text: messageOf(err) });
    }
  };
  const putBack = async (channel: string, fp: string) => {
    setMessage(undefined);
    try {
      await call("POST", `${keyPath(channel, fp)}/in`, { csrf: session.csrf });
      setMessage({ kind: "done", text: `Key ${fp} of ${channel} put back.` });
      setReloads((n) => n + 1);
    } catch (err) {
      setMessage({ kind: "error", text: messageOf(err) });
    }
  };
  const test = async (channel: string, fp: string) => {
    setTests({ ...tests, [id(channel, fp)]: "Testing…" });
    try {
      const result = await call<KeyTest>("POST", `${keyPath(channel, fp)}/test`, { csrf: session.csrf });
      setTests((t) => ({ ...t, [id(channel, fp)]: result }));
    } catch (err) {
      if (isMissingEndpoint(err)) setTestMissing(true);
      setTests((t) => ({ ...t, [id(channel, fp)]: messageOf(err) }));
    }
  };

  return (
    <section aria-labelledby="channels-title">
      <h1 id="channels-title">Channels</h1>
      {channels.error && <p role="alert" class="error">{channels.error}</p>}
      {message && <p role={message.kind === "error" ? "alert" : "status"} class={message.kind} data-testid="channel-message">{message.text}</p>}
      {showStats && <p class="hint">Requests, error rate and latency over the last hour.</p>}
      {(channels.data?.data ?? []).map((c) => (
        <div key={c.channel} class="channel" data-testid="channel" data-channel={c.channel}>
          <h2>{c.channel} {c.enabled ? "" : <span class="tag">disabled</span>}</h2>
          {c.keys.length === 0 && <p>No keys.</p>}
          <ul class="keys">
            {c.keys.map((k) => {
              const s = statOf(c.channel, k.fingerprint);
              const t = tests[id(c.channel, k.fingerprint)];
              const reasonId = `reason-${c.channel}-${k.fingerprint}`;
              return (
                <li key={k.fingerprint} data-testid="channel-key" data-fingerprint={k.fingerprint} data-state={k.state}>
                  <p><code>{k.fingerprint}</code> <strong class={`state ${k.state}`} data-testid="key-state">{keyStateText(k.state)}</strong>
                    {k.cooldown && <> ({k.cooldown.reason}, until {formatTime(msOf(k.cooldown.until) ?? 0)})</>}
                    {k.taken_out && <> by {k.taken_out.actor} at {formatTime(msOf(k.taken_out.at) ?? 0)}: “{k.taken_out.reason}”</>}
                  </p>
                  {showStats && (
                    <p class="small" data-testid="key-stats">
                      {s ? <>{s.requests} requests, {s.errors} errors ({ratePercent(s.error_rate)}), p50 {millis(s.p50_ms)}, p95 {millis(s.p95_ms)}</> : "No requests."}
                    </p>
                  )}
                  <div class="key-actions">
                    {k.state === "taken_out"
                      ? <button type="button" data-testid="key-in" aria-label={`Put key ${k.fingerprint} of ${c.channel} back`} onClick={() => putBack(c.channel, k.fingerprint)}>Put back</button>
                      : <form class="inline" onSubmit={(e) => { e.preventDefault(); void takeOut(c.channel, k.fingerprint); }}>
                          <label for={reasonId}>Reason to take {k.fingerprint} out</label>
                          <input id={reasonId} data-testid="key-reason" maxLength={200} value={reasons[id(c.channel, k.fingerprint)] ?? ""}
                            onInput={(e) => setReasons({ ...reasons, [id(c.channel, k.fingerprint)]: (e.target as HTMLInputElement).value })} />
                          <button type="submit" class="danger" data-testid="key-out" aria-label={`Take key ${k.fingerprint} of ${c.channel} out`}>Take out</button>
                        </form>}
                    {canTest && <button type="button" data-testid="key-test" aria-label={`Test key ${k.fingerprint} of ${c.channel}`} onClick={() => test(c.channel, k.fingerprint)}>Test</button>}
                  </div>
                  {t !== undefined && (
                    <p role="status" data-testid="key-test-result" class={typeof t === "string" ? "" : t.ok ? "done" : "error"}>
                      {typeof t === "string" ? t : t.ok ? `Answered (${t.model}) in ${t.total_ms} ms.` : `Failed${t.status ? ` with ${t.status}` : ""}: ${t.error_class ?? ""} ${t.message ?? ""} (${t.total_ms} ms)`}
                    </p>
                  )}
                </li>
              );
            })}
          </ul>
        </div>
      ))}
      {channels.data && channels.data.data.length === 0 && <p>No channels are configured.</p>}
    </section>
  );
}
