// The price list route: every model's price as the gateway compiled it from the
// configuration in force (the table of `gateway check --prices`): each component's rate per
// unit as an exact decimal and where it comes from, tiers and variants by what they change,
// what each group serving the model charges (× its multiplier) and what each channel costs
// the operator. Money never passes through a float.

import { basename } from "node:path";
import { formatScaled } from "../billing/cost.js";
import { FEMTO, modelPriceTable, PPM, ratio, type ChannelCostTable, type ModelPriceTable, type PriceSection } from "../billing/price-table.js";
import type { AdminRoute } from "./route.js";

const times = (femto: bigint, ppm: bigint): string => formatScaled(femto * ppm, FEMTO + PPM);

function sectionView(s: PriceSection, groups: ModelPriceTable["groups"]): Record<string, unknown> {
  return {
    kind: s.kind,
    ...(s.aboveInputTokens === undefined ? {} : { above_input_tokens: s.aboveInputTokens }),
    ...(s.when === undefined ? {} : { when: s.when }),
    rows: s.rows.map((r) => ({
      component: r.component, per: r.per, price: formatScaled(r.femto, FEMTO), from: r.from, fallback: r.fallback,
      charged: Object.fromEntries(groups.map(([g, ppm]) => [g, times(r.femto, ppm)])),
    })),
  };
}

function channelView(c: ChannelCostTable): Record<string, unknown> {
  return {
    channel: c.channel, enabled: c.enabled, basis: c.basis, multiplier: ratio(c.multiplierPpm),
    ...(c.sections ? { sections: c.sections.map((s) => sectionView(s, [])) } : {}),
  };
}

function modelView(t: ModelPriceTable, endpoints: readonly string[]): Record<string, unknown> {
  return {
    model: t.model, endpoints,
    service_tiers: Object.fromEntries(t.serviceTiers.map(([n, ppm]) => [n, ratio(ppm)])),
    groups: Object.fromEntries(t.groups.map(([g, ppm]) => [g, ratio(ppm)])),
    sections: t.sections.map((s) => sectionView(s, t.groups)),
    channels: t.channels.map(channelView),
  };
}

export const priceRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/prices", operationId: "priceList", scope: "read",
    summary: "Every model's price as the gateway compiled it from the configuration in force (what `gateway check --prices` prints): each component's rate per unit (tokens per 1M) as an exact decimal and where it comes from, tiers and variants by what they change, what each group charges (price × its multiplier) and what each channel costs; the groups' multipliers; and the file it came from.",
    responses: { 200: "PriceList" },
    async handle({ runtime }) {
      const data = [...runtime.models.values()].map((m) => modelView(modelPriceTable(runtime, m.name)!, [...m.endpoints]));
      return {
        status: 200,
        body: {
          source: { file: basename(runtime.sourcePath), sha256: runtime.sourceHash },
          groups: Object.fromEntries([...runtime.groups.values()].map((g) => [g.name, ratio(g.multiplierPpm)])),
          data,
        },
      };
    },
  },
];
