// An answered question's one-line note: "Color: Red · Count: 3", the fields' labels and
// the chosen options' labels, not the JSON the agent was sent. Bounded: a form of 64
// fields of long text still makes one short line.

import type { ElicitationField, FieldValue } from "./contracts";
import { clip } from "./dom";
import type { Translate } from "./i18n";

/** At most this many fields are named; the rest are counted. */
const MAX_FIELDS = 4;
/** Each value, and each label, is cut to this many characters. */
const MAX_PART = 60;

/** One value as the user saw it: an option's label, "yes"/"no", a number, the text. */
function shown(field: ElicitationField, value: FieldValue, t: Translate): string {
  const label = (v: string): string =>
    field.options?.find((option) => option.value === v)?.label ?? v;
  if (typeof value === "boolean") return t(value ? "answerYes" : "answerNo");
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.map(label).join(", ");
  return label(value);
}

/**
 * The fields answered in `values`, in the form's order, as "label: value" joined by " · "
 * ("" when none was). An "Other" text counts as its question's answer.
 */
export function answerSummary(
  fields: readonly ElicitationField[],
  values: Readonly<Record<string, FieldValue>>,
  t: Translate,
): string {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const parts: string[] = [];
  for (const field of fields) {
    if (!Object.hasOwn(values, field.name)) continue;
    const value = values[field.name] as FieldValue;
    const question = field.customOf ? byName.get(field.customOf) : undefined;
    const title = (question ?? field).title ?? (question ?? field).name;
    parts.push(`${clip(title, MAX_PART)}: ${clip(shown(field, value, t), MAX_PART)}`);
  }
  const more = parts.length - MAX_FIELDS;
  const kept = parts.slice(0, MAX_FIELDS);
  if (more > 0) kept.push(t("answerMore", { count: more }));
  return kept.join(" · ");
}
