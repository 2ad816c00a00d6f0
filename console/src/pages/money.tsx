// An amount as the server wrote it, with the currency beside it (outside the marked element,
// so scripts read the bare exact decimal).
export function Money({ amount, currency, testid }: { amount: string; currency: string; testid?: string }) {
  return (
    <span class="money">
      <span data-testid={testid}>{amount}</span> <span class="currency">{currency}</span>
    </span>
  );
}
