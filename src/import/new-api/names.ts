// Names the gateway accepts (letters, digits and . _ - : @, starting with a letter or
// digit) for what new-api named freely: usernames are checked, channel and token names
// (free text there, often not ASCII) are turned into slugs.

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;

/** True when `name` is a gateway name as it stands. */
export function isGatewayName(name: string): boolean {
  return NAME.test(name);
}

/** `text` with every run of other characters made one "-", trimmed to start and end with a
 * letter or digit; "" when nothing usable is left. */
export function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._@]+/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "").slice(0, 40);
}
