import {
  type StreakSettingsBody,
  streakSettingsResponseSchema,
  streakSettingsSchema,
} from '@pts/shared/schemas/streaks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { request } from '../../api.ts';
import { describeError, messagesByPath } from '../../errors/describe.ts';
import { ErrorNote } from '../../errors/ErrorNote.tsx';
import { streakSettingsQuery } from '../../queries/program.ts';
import { canEdit, useBrand } from '../../session.ts';
import { TableWrap } from '../../TableWrap.tsx';
import { FormButtons, InputField } from './fields.tsx';
import { fieldMessage, numberOf, validated } from './validation.tsx';

/**
 * The brand's streak settings and milestones (Program page): read by every role, changed by admins and
 * owners through `PUT /portal/api/brands/:brandId/streak-settings` — the streak service of the services API.
 */
export default function StreaksSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const streaks = useQuery({
    ...streakSettingsQuery(brandId),
  });
  const save = useMutation({
    mutationFn: (settings: unknown) =>
      request(
        streakSettingsResponseSchema,
        'PUT',
        `/brands/${brandId}/streak-settings`,
        validated(streakSettingsSchema, settings),
      ),
    onSuccess: (answer) => {
      queryClient.setQueryData(streakSettingsQuery(brandId).queryKey, answer);
      setEditing(false);
      setSaved(true);
    },
  });

  return (
    <section aria-labelledby="streaks-heading" className="stack">
      <h2 id="streaks-heading">Streaks and milestones</h2>
      <p>
        A member&apos;s daily streak grows with each UTC day of activity (check-ins, recorded activity). Check-ins pay
        the <code>daily_checkin</code> rule&apos;s reward times the multiplier; a milestone&apos;s bonus is claimed once
        through the <code>streak_milestone</code> rule.
      </p>
      {streaks.isPending ? <p className="loading">Loading the streak settings…</p> : null}
      <ErrorNote error={streaks.error} onRetry={() => void streaks.refetch()} />
      {streaks.data ? (
        <>
          {streaks.data.custom ? null : <p className="note">The platform&apos;s default settings are in force.</p>}
          <dl className="facts" data-testid="streak-facts">
            <dt>Grace period</dt>
            <dd>{streaks.data.settings.graceHours} h after the last activity</dd>
            <dt>Freezes</dt>
            <dd>
              {streaks.data.settings.freezeEveryDays === 0 || streaks.data.settings.maxFreezes === 0
                ? 'none'
                : `one every ${streaks.data.settings.freezeEveryDays} days, at most ${streaks.data.settings.maxFreezes} held`}
            </dd>
          </dl>
          <TableWrap label="Streak milestones">
            <table data-testid="milestones">
              <caption>Milestones</caption>
              <thead>
                <tr>
                  <th scope="col">Streak</th>
                  <th scope="col">Bonus</th>
                </tr>
              </thead>
              <tbody>
                {streaks.data.settings.milestones.map((milestone) => (
                  <tr key={milestone.days} data-days={milestone.days}>
                    <th scope="row">{milestone.days} days</th>
                    <td>{milestone.bonus} pts</td>
                  </tr>
                ))}
                {streaks.data.settings.milestones.length === 0 ? (
                  <tr>
                    <td colSpan={2}>No milestones.</td>
                  </tr>
                ) : null}
              </tbody>
            </table>
          </TableWrap>
          <TableWrap label="Streak multipliers">
            <table data-testid="multipliers">
              <caption>Check-in multipliers</caption>
              <thead>
                <tr>
                  <th scope="col">From a streak of</th>
                  <th scope="col">Multiplier</th>
                </tr>
              </thead>
              <tbody>
                {streaks.data.settings.multipliers.map((tier) => (
                  <tr key={tier.days}>
                    <th scope="row">{tier.days} days</th>
                    <td>×{tier.multiplier}</td>
                  </tr>
                ))}
                {streaks.data.settings.multipliers.length === 0 ? (
                  <tr>
                    <td colSpan={2}>None: every check-in pays ×1.</td>
                  </tr>
                ) : null}
              </tbody>
            </table>
          </TableWrap>
          {saved && !editing ? <p role="status">Streak settings saved; they apply at once.</p> : null}
          {editable && !editing ? (
            <div>
              <button
                type="button"
                onClick={() => {
                  save.reset();
                  setSaved(false);
                  setEditing(true);
                }}
              >
                Edit streak settings
              </button>
            </div>
          ) : null}
          {editable && editing ? (
            <StreakForm
              settings={streaks.data.settings}
              saving={save.isPending}
              error={save.error}
              onCancel={() => setEditing(false)}
              onSave={(settings) => save.mutate(settings)}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}

interface Row {
  /** A stable React key for the row while the list is edited. */
  key: number;
  days: string;
  value: string;
}

let nextKey = 0;
const rowsOf = <T extends { days: number }>(items: T[], value: (item: T) => number): Row[] =>
  items.map((item) => ({ key: nextKey++, days: String(item.days), value: String(value(item)) }));

function StreakForm(props: {
  settings: StreakSettingsBody;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(settings: unknown): void;
}) {
  const { settings } = props;
  const [graceHours, setGraceHours] = useState(String(settings.graceHours));
  const [freezeEveryDays, setFreezeEveryDays] = useState(String(settings.freezeEveryDays));
  const [maxFreezes, setMaxFreezes] = useState(String(settings.maxFreezes));
  const [milestones, setMilestones] = useState(() => rowsOf(settings.milestones, (m) => m.bonus));
  const [multipliers, setMultipliers] = useState(() => rowsOf(settings.multipliers, (m) => m.multiplier));
  const messages = messagesByPath(props.error);
  const field = (path: string) => fieldMessage(messages, path, `streak-${path.replaceAll('.', '-')}-error`);
  // The form replaces the button that opened it: its first field takes the focus (keyboard users).
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      graceHours: numberOf(graceHours),
      freezeEveryDays: numberOf(freezeEveryDays),
      maxFreezes: numberOf(maxFreezes),
      milestones: milestones.map((row) => ({ days: numberOf(row.days), bonus: numberOf(row.value) })),
      multipliers: multipliers.map((row) => ({ days: numberOf(row.days), multiplier: numberOf(row.value) })),
    });
  };
  const grace = field('graceHours');
  const every = field('freezeEveryDays');
  const most = field('maxFreezes');
  const milestonesError = field('milestones');
  const multipliersError = field('multipliers');
  const known = Object.keys(messages).filter((path) => path !== '');

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label="Streak settings" noValidate>
      <h3>Edit streak settings</h3>
      <InputField
        label="Grace period in hours (24 to 168): how long after the last activity the streak still continues"
        ref={first}
        name="graceHours"
        type="number"
        inputMode="numeric"
        value={graceHours}
        onChange={(e) => setGraceHours(e.target.value)}
        field={grace}
      />
      <InputField
        label="Earn a freeze every N days of streak (0: no freezes)"
        name="freezeEveryDays"
        type="number"
        inputMode="numeric"
        value={freezeEveryDays}
        onChange={(e) => setFreezeEveryDays(e.target.value)}
        field={every}
      />
      <InputField
        label="Most freezes a member holds"
        name="maxFreezes"
        type="number"
        inputMode="numeric"
        value={maxFreezes}
        onChange={(e) => setMaxFreezes(e.target.value)}
        field={most}
      />
      <RowsEditor
        legend="Milestones (days ascending)"
        noun="Milestone"
        valueLabel="bonus (pts)"
        path="milestones"
        rows={milestones}
        setRows={setMilestones}
        messages={messages}
        error={milestonesError}
      />
      <RowsEditor
        legend="Check-in multipliers (from a streak of N days, ascending)"
        noun="Multiplier"
        valueLabel="multiplier (1 to 10)"
        path="multipliers"
        rows={multipliers}
        setRows={setMultipliers}
        messages={messages}
        error={multipliersError}
        step="0.1"
      />
      {props.error && known.length === 0 ? (
        <p role="alert" className="error">
          {messages[''] ?? describeError(props.error).message}
        </p>
      ) : null}
      {known.length > 0 ? (
        <p role="alert" className="error">
          Some settings need fixing (see the messages above).
        </p>
      ) : null}
      <FormButtons submit="Save streak settings" saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}

/** An editable list of `days → value` rows (milestones, multiplier tiers), each with its own messages. */
function RowsEditor(props: {
  legend: string;
  noun: string;
  valueLabel: string;
  path: string;
  rows: Row[];
  setRows(rows: Row[]): void;
  messages: Record<string, string>;
  error: ReturnType<typeof fieldMessage>;
  step?: string;
}) {
  const { rows, setRows, path, noun } = props;
  const change = (key: number, patch: Partial<Row>) =>
    setRows(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  return (
    <fieldset aria-describedby={props.error.error ? `streak-${path}-error` : undefined}>
      <legend>{props.legend}</legend>
      {props.error.error}
      {rows.length === 0 ? <p className="note">None.</p> : null}
      {rows.map((row, index) => {
        const days = fieldMessage(props.messages, `${path}.${index}.days`, `streak-${path}-${index}-days-error`);
        const valueKey = path === 'milestones' ? 'bonus' : 'multiplier';
        const value = fieldMessage(
          props.messages,
          `${path}.${index}.${valueKey}`,
          `streak-${path}-${index}-${valueKey}-error`,
        );
        return (
          <div className="row" key={row.key} data-row={`${path}-${index}`}>
            <InputField
              label={
                <>
                  {noun} {index + 1}: days
                </>
              }
              type="number"
              inputMode="numeric"
              value={row.days}
              onChange={(e) => change(row.key, { days: e.target.value })}
              field={days}
            />
            <InputField
              label={
                <>
                  {noun} {index + 1}: {props.valueLabel}
                </>
              }
              type="number"
              inputMode="decimal"
              step={props.step ?? '1'}
              value={row.value}
              onChange={(e) => change(row.key, { value: e.target.value })}
              field={value}
            />
            <button
              type="button"
              className="secondary"
              aria-label={`Remove ${noun.toLowerCase()} ${index + 1}`}
              onClick={() => setRows(rows.filter((other) => other.key !== row.key))}
            >
              Remove
            </button>
          </div>
        );
      })}
      <div>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            const last = rows.at(-1);
            const days = last ? String(Number(last.days) + 1) : '7';
            setRows([...rows, { key: nextKey++, days, value: path === 'milestones' ? '100' : '1.5' }]);
          }}
        >
          Add {noun.toLowerCase()}
        </button>
      </div>
    </fieldset>
  );
}
