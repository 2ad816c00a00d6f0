// CSV as RFC 4180 writes it: a header row, CRLF line ends, and a field quoted (its quotes
// doubled) when it holds a comma, a quote, CR or LF. A text field a spreadsheet would run
// as a formula (starting with = + - @, tab or CR) is written with a leading apostrophe;
// numbers and money are written as they are (a negative margin stays a number).

/** One CSV field: text (guarded against formulas), a number or exact decimal, or empty. */
export type CsvField = { readonly text: string } | string | number | null;

const FORMULA_START = /^[=+\-@\t\r]/;

function fieldText(value: CsvField): string {
  if (value === null) return "";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return value;
  return FORMULA_START.test(value.text) ? `'${value.text}` : value.text;
}

function quoted(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The header and the rows as one CSV document. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvField[])[]): string {
  return [header.map(quoted), ...rows.map((row) => row.map((v) => quoted(fieldText(v))))].map((cells) => `${cells.join(",")}\r\n`).join("");
}

/** The headers of a CSV answer offered for download as `filename`. */
export function csvHeaders(filename: string): Record<string, string> {
  return { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${filename}"`, "cache-control": "no-store" };
}
