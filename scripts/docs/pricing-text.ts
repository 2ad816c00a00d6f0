// The hand-written parts of docs/pricing.md (pricing.ts renders the rest from the schema and
// the pricing code): how a request is priced, the breakdown format, the operator's cost,
// strategy: cheapest and the fallback warning.

export const pricingIntro = `How the gateway prices a request, from the usage the provider reports to the one figure it charges, and how anyone can check that figure from the usage log alone. Prices are written in \`gateway.yaml\`: \`models.<model>.price\` is the list price, \`channels[].cost\` what a channel costs the operator; every key is in the [configuration reference](configuration.md#price). Every figure on this page is computed by the gateway's own pricing code when the page is generated (\`npm run docs\`), and a test fails when the page is out of date.`;

export const howPricedText = `1. **Usage into components.** Each protocol's usage object (chat-completions, responses, messages, generate-content, realtime, speech, transcription, images) is read into one canonical usage: input, cache reads, cache writes, output and reasoning; the parts of those totals a provider reports apart (audio and image input, cached audio, 1-hour cache writes, audio and image output); and the service tier the answer says served it. Each token lands in exactly one component: \`input\` is the uncached input left once audio and image input are taken out, \`output\` the output left once reasoning, audio and image output are taken out, and so on; a part larger than its total is cut to fit, so an inconsistent report never bills a token twice. Hosted tool calls, requests, images, seconds and characters are counted beside the tokens.
2. **The price that applies.** A variant first: the first of the price's \`variants\` whose \`when\` the request matches in every value it names (image \`size\` and \`quality\`, video \`size\` or \`resolution\`, \`service_tier\`) replaces the price; a variant has no tiers. Then a tier: when the request's input (every input token: uncached, read from a cache or written to one) exceeds a tier's \`above_input_tokens\`, the whole request is billed at the highest such tier, not only the tokens past the threshold.
3. **Each component at its price.** quantity × price ÷ per: per 1M tokens, per request or image, per second (a breakdown counts milliseconds, per 1k), per 1k characters, per 1k tool calls. A component the price does not name is billed at its closest base price (the table below) and warned once per model; none is dropped.
4. **The multipliers.** The sum × the service tier's multiplier (\`service_tiers\`: the tier the answer names, else the one the request asked; a tier the price does not list changes nothing) × the multiplier of the token's group (\`groups.<group>.multiplier\`).
5. **One rounding.** It is all exact integer arithmetic (amounts in nano-units, 10⁻⁹ of the currency; ratios in millionths; line prices in 10⁻¹⁵), summed exactly and rounded once, half up, to the nano-unit. No float touches money, and no line is rounded on its own.

\`\`\`text
cost = round half up to 10⁻⁹ ( Σ quantity × price ÷ per × service-tier multiplier × group multiplier )
\`\`\``;

export const tiersIntro = `A price may change with the request: its input size (tiers), what it asked (variants), and the service tier that served it. A tier or a variant is a whole price: a key it leaves out keeps the model's (and a tier's cache prices follow its own input through the ratios). Service tiers multiply whichever price applies.`;

export const breakdownIntro = `Each usage entry keeps how its cost was reached, as one line of text:

\`\`\`text
input=1200@3/1M output=300@15/1M web_search=2@10/1k multiplier=0.7 service_tier=flex@0.5 tier=200000 variant=size:1024x1024,quality:high
\`\`\`

- \`component=quantity@price/per\`: one for each priced component with a quantity, in a fixed order. The price is the exact unit price in the currency, per \`1M\` (tokens), \`1k\` (milliseconds, characters, tool calls) or \`1\` (requests, images).
- \`multiplier=\`: the group's multiplier.
- \`service_tier=name@multiplier\`: the service tier that changed the price, when one did.
- \`tier=N\` (the price was its tier above N input tokens) and \`variant=key:value,…\` (the variant the request chose) say which price applied; they change nothing in the sum.

To reproduce the total: for each line, quantity × price ÷ per × multiplier × service-tier multiplier, keeping every decimal; add the lines; round once, half up, to 9 decimals. \`gateway logs --explain REQUEST_ID\` prints an entry's lines with their subtotals, and the billing endpoints and the \`X-Gateway-Cost\` header give the same total.`;

export const marginIntro = `A channel may declare what it costs the operator: a multiplier on the list price (an upstream's discount, a reseller's rate) or a price of its own for a model, in the shape of a model's price, × the multiplier. Each usage entry records that cost beside the price charged: the same usage at the channel's price, without the group multiplier. \`gateway usage --by channel\` and \`--by model\` show revenue, cost and margin.`;

export const cheapestText = `The channels of each priority are ranked once, when the config loads, by what 1M input and 1M output tokens (and one request, image, second and 1k characters) cost the operator on each; a request tries the cheapest first (shared by weight among equal costs) and fails over to the next cheapest. Priority still comes first: a cheaper channel of a lower priority is tried only after the higher ones.`;

export const fallbackWarningText = `When an answer reports a component its model's price does not name (audio tokens on a model priced for text, 1-hour cache writes without their ratio, image output), the gateway bills it at the closest base price (the last column of the component table) and logs once per model and component, in each process:

\`\`\`json
{"time":"…","level":"warn","msg":"the price list has no price for a component an answer reported; it is billed at the closest base price","model":"gpt-realtime","component":"audio_output","billedAs":"output"}
\`\`\`

Add the key to the model's price to bill the component as the provider does. \`gateway check --prices\` marks such components \`fallback → base\` before any request is served. Reasoning at the output price, and cache reads and writes at input × their ratio (1 when omitted), are rules, not fallbacks: they are not warned about.`;
