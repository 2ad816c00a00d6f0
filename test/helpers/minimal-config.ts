// The smallest gateway.yaml that compiles: one user, token, channel and model. Suites that
// test one config key at a time add theirs to it.

export const minimalConfig = `
groups: { default: {} }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com/v1/", keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: 1 } }
`;
