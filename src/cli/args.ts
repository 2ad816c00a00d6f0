// Minimal flag parsing shared by the subcommands: `--name value` and `--name=value`.

/** Returns the value of `--name`, or undefined. */
export function flag(args: readonly string[], name: string): string | undefined {
  const long = `--${name}`;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === long) return args[i + 1];
    if (a.startsWith(long + "=")) return a.slice(long.length + 1);
  }
  return undefined;
}
