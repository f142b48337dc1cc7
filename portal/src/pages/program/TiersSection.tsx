import {
  type SetTiersRequest,
  setTiersRequestSchema,
  type TiersResponse,
  tiersResponseSchema,
} from '@pts/shared/schemas/tiers';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { request } from '../../api.ts';
import { describeError, messagesByPath } from '../../errors/describe.ts';
import { ErrorNote } from '../../errors/ErrorNote.tsx';
import { tiersQuery } from '../../queries/program.ts';
import { canEdit, useBrand } from '../../session.ts';
import { TableWrap } from '../../TableWrap.tsx';
import { FormButtons, InputField } from './fields.tsx';
import { fieldMessage, numberOf, validated } from './validation.tsx';

const BASES = { earned: 'pts earned', spent: 'value spent' } as const;
const PERIODS = {
  rolling_365: 'the last 365 days',
  calendar_year: 'the calendar year (UTC)',
  lifetime: 'since joining',
} as const;

/**
 * The brand's VIP tiers (Program page, docs/tiers.md "In the portal"): read by every role, replaced by admins
 * and owners through `PUT /portal/api/brands/:brandId/tiers` — the tier service of the admin API, audited.
 */
export default function TiersSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const tiers = useQuery(tiersQuery(brandId));
  const save = useMutation({
    mutationFn: (table: unknown) =>
      request(tiersResponseSchema, 'PUT', `/brands/${brandId}/tiers`, validated(setTiersRequestSchema, table)),
    onSuccess: (answer) => {
      queryClient.setQueryData(tiersQuery(brandId).queryKey, answer);
      void queryClient.invalidateQueries({ queryKey: ['brand', brandId, 'tiers', 'distribution'] });
      setEditing(false);
      setSaved(true);
    },
  });
  const table = tiers.data;
  return (
    <section aria-labelledby="tiers-heading" className="stack">
      <h2 id="tiers-heading">VIP tiers</h2>
      <p>
        Members rank in 2 to 6 tiers by what they earned or spent over a period. A tier multiplies what rules pay, pays
        its entry reward once, and may keep perks for itself; promotions happen at once, downgrades at the period&apos;s
        turn (after the grace).
      </p>
      {tiers.isPending ? <p className="loading">Loading the tiers…</p> : null}
      <ErrorNote error={tiers.error} />
      {table ? (
        <>
          {table.tiers ? (
            <>
              <dl className="facts" data-testid="tier-facts">
                <dt>Ranked by</dt>
                <dd>
                  {BASES[table.basis ?? 'earned']} over {PERIODS[table.period ?? 'calendar_year']}
                </dd>
                <dt>Grace after the turn</dt>
                <dd>{table.graceDays} days</dd>
              </dl>
              <TableWrap label="VIP tiers">
                <table data-testid="tiers">
                  <caption>Tiers</caption>
                  <thead>
                    <tr>
                      <th scope="col">Tier</th>
                      <th scope="col">From</th>
                      <th scope="col">Multiplier</th>
                      <th scope="col">Entry reward</th>
                    </tr>
                  </thead>
                  <tbody>
                    {table.tiers.map((tier) => (
                      <tr key={tier.name}>
                        <th scope="row">{tier.name}</th>
                        <td>{thresholdText(table, tier.threshold)}</td>
                        <td>×{tier.multiplier}</td>
                        <td>{tier.entryReward} pts</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            </>
          ) : (
            <p className="note">No tiers yet: every member earns what the rules pay.</p>
          )}
          {saved && !editing ? (
            <p role="status">Tiers saved; promotions by the new table start with the next event.</p>
          ) : null}
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
                {table.tiers ? 'Edit tiers' : 'Set up tiers'}
              </button>
            </div>
          ) : null}
          {editable && editing ? (
            <TierForm
              table={table}
              saving={save.isPending}
              error={save.error}
              onCancel={() => setEditing(false)}
              onSave={(next) => save.mutate(next)}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}

function thresholdText(table: TiersResponse, threshold: string) {
  return table.basis === 'spent' ? `${threshold} ${table.currency} spent` : `${threshold} pts earned`;
}

interface Row {
  key: number;
  name: string;
  threshold: string;
  multiplier: string;
  entryReward: string;
  perks: number[];
}

let nextKey = 0;
const STARTER: Omit<Row, 'key'>[] = [
  { name: 'Bronze', threshold: '0', multiplier: '1', entryReward: '0', perks: [] },
  { name: 'Silver', threshold: '500', multiplier: '1.25', entryReward: '50', perks: [] },
];

/** The tier editor: 2 to 6 tiers, the basis, the period and the grace, checked with the shared schema. */
export function TierForm(props: {
  table: TiersResponse;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(table: SetTiersRequest): void;
}) {
  const { table } = props;
  const [basis, setBasis] = useState<string>(table.basis ?? 'earned');
  const [period, setPeriod] = useState<string>(table.period ?? 'calendar_year');
  const [graceDays, setGraceDays] = useState(String(table.graceDays));
  const [rows, setRows] = useState<Row[]>(() =>
    (table.tiers ?? STARTER).map((tier) => ({
      key: nextKey++,
      name: tier.name,
      threshold: String(tier.threshold),
      multiplier: String(tier.multiplier),
      entryReward: String(tier.entryReward),
      perks: tier.perks,
    })),
  );
  const messages = messagesByPath(props.error);
  const field = (path: string) => fieldMessage(messages, path, `tier-${path.replaceAll('.', '-')}-error`);
  const first = useRef<HTMLSelectElement>(null);
  useEffect(() => first.current?.focus(), []);
  const change = (key: number, patch: Partial<Row>) =>
    setRows(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      basis: basis as SetTiersRequest['basis'],
      period: period as SetTiersRequest['period'],
      graceDays: numberOf(graceDays),
      tiers: rows.map((row) => ({
        name: row.name,
        // Whole pts go as a number; an amount of the currency as the text typed ("250.50").
        threshold: basis === 'earned' && /^\d+$/.test(row.threshold.trim()) ? Number(row.threshold) : row.threshold,
        multiplier: numberOf(row.multiplier),
        entryReward: numberOf(row.entryReward),
        ...(row.perks.length > 0 ? { perks: row.perks } : {}),
      })),
    });
  };
  const basisError = field('basis');
  const periodError = field('period');
  const tiersError = field('tiers');
  const known = Object.keys(messages).filter((path) => path !== '');

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label="VIP tiers" noValidate>
      <h3>Edit VIP tiers</h3>
      <label>
        Rank members by
        <select
          ref={first}
          name="basis"
          value={basis}
          onChange={(e) => setBasis(e.target.value)}
          {...basisError.attributes}
        >
          <option value="earned">pts earned</option>
          <option value="spent">value spent ({table.currency})</option>
        </select>
        {basisError.error}
      </label>
      <label>
        Over
        <select name="period" value={period} onChange={(e) => setPeriod(e.target.value)} {...periodError.attributes}>
          <option value="rolling_365">the last 365 days</option>
          <option value="calendar_year">the calendar year (UTC)</option>
          <option value="lifetime">since joining</option>
        </select>
        {periodError.error}
      </label>
      <InputField
        label="Grace in days (0 to 365): how long a member keeps a tier after the turn would lower it"
        name="graceDays"
        type="number"
        inputMode="numeric"
        value={graceDays}
        onChange={(e) => setGraceDays(e.target.value)}
        field={field('graceDays')}
      />
      <fieldset aria-describedby={tiersError.error ? 'tier-tiers-error' : undefined}>
        <legend>Tiers, lowest first (2 to 6; the first starts at 0)</legend>
        {tiersError.error}
        {rows.map((row, index) => (
          <div className="row" key={row.key} data-row={`tier-${index}`}>
            <InputField
              label={`Tier ${index + 1}: name`}
              value={row.name}
              onChange={(e) => change(row.key, { name: e.target.value })}
              field={field(`tiers.${index}.name`)}
            />
            <InputField
              label={`Tier ${index + 1}: from (${basis === 'spent' ? `${table.currency} spent` : 'pts earned'})`}
              type="text"
              inputMode="decimal"
              value={row.threshold}
              onChange={(e) => change(row.key, { threshold: e.target.value })}
              field={field(`tiers.${index}.threshold`)}
            />
            <InputField
              label={`Tier ${index + 1}: multiplier (1 to 10)`}
              type="number"
              inputMode="decimal"
              step="0.01"
              value={row.multiplier}
              onChange={(e) => change(row.key, { multiplier: e.target.value })}
              field={field(`tiers.${index}.multiplier`)}
            />
            <InputField
              label={`Tier ${index + 1}: entry reward (pts)`}
              type="number"
              inputMode="numeric"
              value={row.entryReward}
              onChange={(e) => change(row.key, { entryReward: e.target.value })}
              field={field(`tiers.${index}.entryReward`)}
            />
            <button
              type="button"
              className="secondary"
              aria-label={`Remove tier ${index + 1}`}
              disabled={rows.length <= 2}
              onClick={() => setRows(rows.filter((other) => other.key !== row.key))}
            >
              Remove
            </button>
          </div>
        ))}
        <div>
          <button
            type="button"
            className="secondary"
            disabled={rows.length >= 6}
            onClick={() => {
              const last = rows.at(-1);
              const threshold = last ? String((Number(last.threshold) || 0) * 2 || 100) : '0';
              setRows([
                ...rows,
                {
                  key: nextKey++,
                  name: '',
                  threshold,
                  multiplier: last?.multiplier ?? '1',
                  entryReward: '0',
                  perks: [],
                },
              ]);
            }}
          >
            Add tier
          </button>
        </div>
      </fieldset>
      {props.error && known.length === 0 ? (
        <p role="alert" className="error">
          {messages[''] ?? describeError(props.error).message}
        </p>
      ) : null}
      {known.length > 0 ? (
        <p role="alert" className="error">
          Some tiers need fixing (see the messages above).
        </p>
      ) : null}
      <FormButtons submit="Save tiers" saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}
