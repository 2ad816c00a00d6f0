// Image generation and text to speech pass through to OpenAI-protocol channels with the
// official SDK: one image per call (`n` refused, as SPEC says), billed per image or by the
// tokens image models report; speech bytes relayed as sent, billed per 1k characters.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI, { toFile } from "openai";
import { fakeAudio, fakeImageBase64, startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config } from "./support.js";

describe("images and speech", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      channels: [channel("main", fake.url, {
        models: ["dall-e-3", "dall-e-2", "gpt-image-1", "tts-1", "whisper-1", "gpt-4o-transcribe"],
        model_map: { "dall-e-2": "dall-e-2-2024" },
      })],
      models: {
        "dall-e-3": { endpoint: "image", price: { per_image: 0.04 } },
        "dall-e-2": { endpoint: "image", price: { per_image: 0.02 } },
        "gpt-image-1": { endpoint: "image", price: { input: 5, output: 40 } },
        "tts-1": { endpoint: "speech", price: { per_1k_chars: 0.015 } },
        "whisper-1": { endpoint: "transcription", price: { per_second: 0.0001 } },
        "gpt-4o-transcribe": { endpoint: "transcription", price: { input: 2.5, output: 10 } },
      },
    }));
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const lastEntry = () => gw.store.logs({ limit: 1 })[0];

  test("one image per call, billed per image × the group multiplier", async () => {
    const r = await client.images.generate({ model: "dall-e-3", prompt: "a fox", size: "1024x1024", response_format: "b64_json" });
    assert.equal(r.data?.[0]?.b64_json, fakeImageBase64);
    assert.equal(fake.received.at(-1)!.path, "/v1/images/generations");
    assert.equal(lastEntry().costNano, 28_000_000n); // 0.04 × 0.7
    assert.equal(lastEntry().estimated, false);
  });

  test("an image model that reports tokens is billed by them", async () => {
    await client.images.generate({ model: "gpt-image-1", prompt: "a fox" });
    // (20 × 5 + 1056 × 40) / 1M × 0.7 = 0.0296380 → 29,638,000 nano
    assert.equal(lastEntry().costNano, 29_638_000n);
  });

  test("`n` must not be sent, a prompt is required, size is <w>x<h>; nothing reaches the upstream", async () => {
    const before = fake.received.length;
    await assert.rejects(client.images.generate({ model: "dall-e-3", prompt: "x", n: 2 }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /'n' must not be sent/.test(e.message));
    await assert.rejects(client.images.generate({ model: "dall-e-3", prompt: "" }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.code === "missing_required_parameter");
    await assert.rejects(client.images.generate({ model: "dall-e-3", prompt: "x", size: "big" as never }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /size/.test(e.message));
    assert.equal(fake.received.length, before);
  });

  test("image edits: the multipart upload goes upstream as sent (model renamed), one image billed", async () => {
    const png = Buffer.from(fakeImageBase64, "base64");
    const r = await client.images.edit({
      image: await toFile(png, "fox.png", { type: "image/png" }), prompt: "add a hat", model: "dall-e-2", response_format: "b64_json",
    });
    assert.equal(r.data?.[0]?.b64_json, fakeImageBase64);
    const seen = fake.received.at(-1)!;
    assert.equal(seen.path, "/v1/images/edits");
    assert.match(String(seen.headers["content-type"]), /^multipart\/form-data; boundary=/);
    const raw = seen.raw.toString("latin1");
    assert.match(raw, /name="model"\r\n\r\ndall-e-2-2024\r\n/, "model_map applied inside the upload");
    assert.ok(raw.includes(png.toString("latin1")), "the file bytes arrive intact");
    assert.equal(lastEntry().costNano, 14_000_000n); // 0.02 × 0.7
  });

  test("image edits: no image file → 400 naming it; n refused; JSON body → 415", async () => {
    const before = fake.received.length;
    const form = new FormData();
    form.set("model", "dall-e-2");
    form.set("prompt", "x");
    const noImage = await fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: form });
    assert.equal(noImage.status, 400);
    assert.match((await noImage.json()).error.message, /'image'/);
    await assert.rejects(client.images.edit({ image: await toFile(Buffer.from("x"), "a.png"), prompt: "x", model: "dall-e-2", n: 2 }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /'n' must not be sent/.test(e.message));
    const json = await fetch(`${gw.url}/v1/images/edits`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: "{}",
    });
    assert.equal(json.status, 415);
    assert.equal(fake.received.length, before);
  });

  test("transcription: billed per second of the audio the answer reports, or by its tokens", async () => {
    const audio = await toFile(Buffer.alloc(30_000, 1), "talk.mp3", { type: "audio/mpeg" });
    const whisper = await client.audio.transcriptions.create({ model: "whisper-1", file: audio });
    assert.equal(whisper.text, "Hello from the fake transcriber.");
    assert.equal(fake.received.at(-1)!.path, "/v1/audio/transcriptions");
    // 12.5 s × 0.0001 × 0.7 = 0.000875 → 875,000 nano
    assert.equal(lastEntry().costNano, 875_000n);
    assert.equal(lastEntry().estimated, false);
    await client.audio.transcriptions.create({ model: "gpt-4o-transcribe", file: await toFile(Buffer.alloc(100, 1), "a.mp3") });
    // (40 × 2.5 + 9 × 10) / 1M × 0.7 = 0.000133 → 133,000 nano
    assert.equal(lastEntry().costNano, 133_000n);
    const noFile = new FormData();
    noFile.set("model", "whisper-1");
    const r = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: noFile });
    assert.equal(r.status, 400);
    assert.match((await r.json()).error.message, /'file'/);
  });

  test("speech: the audio bytes come back untouched, billed per 1k characters", async () => {
    const input = "Hello, world! ".repeat(100); // 1,400 characters
    const r = await client.audio.speech.create({ model: "tts-1", input, voice: "alloy" });
    assert.equal(r.headers.get("content-type"), "audio/mpeg");
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), fakeAudio);
    // 1400 / 1000 × 0.015 × 0.7 = 0.0147 → 14,700,000 nano
    assert.equal(lastEntry().costNano, 14_700_000n);
  });
});
