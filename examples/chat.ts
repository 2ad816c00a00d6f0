// Chat through the gateway with the official openai SDK, unchanged but for the base URL:
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_TOKEN=sk-... npx tsx examples/chat.ts [model]

import OpenAI from "openai";

/** One plain and one streamed completion; returns the two replies. */
export async function chat(baseUrl: string, token: string, model: string): Promise<[string, string]> {
  const client = new OpenAI({ apiKey: token, baseURL: `${baseUrl}/v1` });
  const reply = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Hello through the gateway" }],
  });
  const plain = reply.choices[0]?.message.content ?? "";
  console.log(`[chat] ${plain}  (usage: ${JSON.stringify(reply.usage)})`);

  const stream = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Stream it please" }],
    stream: true, stream_options: { include_usage: true },
  });
  let streamed = "";
  process.stdout.write("[stream] ");
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta.content ?? "";
    streamed += delta;
    process.stdout.write(delta);
    if (chunk.usage) process.stdout.write(`  (usage: ${JSON.stringify(chunk.usage)})`);
  }
  process.stdout.write("\n");
  const models = await client.models.list();
  console.log(`[models] ${models.data.map((m) => m.id).join(", ")}`);
  return [plain, streamed];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await chat(process.env.GATEWAY_URL ?? "http://127.0.0.1:8080", process.env.GATEWAY_TOKEN ?? "", process.argv[2] ?? "gpt-4o-mini");
}
