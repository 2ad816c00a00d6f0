// What `gateway channels test` shows of a provider's message: one line, cut to its limit,
// and never the key, even when the provider quotes it whole or the cut would fall inside it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MESSAGE_LIMIT, shown } from "../../src/upstream/channel-probe.js";

const KEY = "sk-live-0123456789abcdefSECRET";

test("a key the provider quotes is blanked, every time it occurs", () => {
  assert.equal(shown(`Incorrect API key provided: ${KEY}. Key ${KEY} is revoked.`, KEY), "Incorrect API key provided: [key]. Key [key] is revoked.");
});

test("a long message is cut to the limit after the key is blanked, so no part of the key is left", () => {
  const message = `${"x".repeat(MESSAGE_LIMIT - 10)} ${KEY} and more`;
  const line = shown(message, KEY);
  assert.ok(line.length <= MESSAGE_LIMIT, line);
  assert.ok(line.endsWith("…"));
  for (let n = 4; n <= KEY.length; n++) assert.ok(!line.includes(KEY.slice(0, n)), `a prefix of the key shows: ${line}`);
});

test("a multi-line body becomes one line", () => {
  assert.equal(shown("<html>\n  <body>Bad gateway</body>\n</html>\n", KEY), "<html> <body>Bad gateway</body> </html>");
});
