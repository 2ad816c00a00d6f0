// A local fake OpenAI-protocol provider for trying the gateway offline:
//   npx tsx examples/fake-provider.ts [port]
// It answers chat completions (JSON and SSE) in the real wire format.

import { startFakeOpenAI } from "../test/helpers/fake-openai.js";

const port = Number(process.argv[2] ?? 18081);
const fake = await startFakeOpenAI({ name: "fake-provider", port });
console.log(`fake OpenAI provider listening on ${fake.url}`);
process.once("SIGINT", () => void fake.close().then(() => process.exit(0)));
process.once("SIGTERM", () => void fake.close().then(() => process.exit(0)));
