import type { Rule, SetRuleRequest } from '@pts/shared/schemas/brands';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { formatMoney, formatPts, formatRate } from '../format/numbers.ts';
import { ruleAnswerSchema, rulesQuery } from '../queries/program.ts';
import { brandQuery } from '../queries/session.ts';
import { canEdit, useBrand } from '../session.ts';
import { ListAndForm } from '../ui/ListAndForm.tsx';
import { CampaignsSection } from './program/CampaignsSection.tsx';
import { DropsSection } from './program/DropsSection.tsx';
import { EngagementSections } from './program/EngagementSections.tsx';
import { LimitField } from './program/fields.tsx';

type Rounding = 'down' | 'nearest' | 'up';
type Currency = NonNullable<SetRuleRequest['rate']>['currency'];

const DETECTION = ['manual', 'url_pattern', 'form_auto', 'sdk_auto'] as const;
const UNLIMITED = -1;

/** The page's sections, by heading id (each section labels itself with it). */
const PROGRAM_SECTIONS = [
  ['rules-heading', 'Event rules'],
  ['streaks-heading', 'Streaks'],
  ['achievements-heading', 'Achievements'],
  ['campaigns-heading', 'Hashtag campaigns'],
  ['drops-heading', 'Drops'],
] as const;

/** Every setting of a rule, so a pause or an edit never resets what it does not show (PUT semantics). */
function settingsOf(rule: Rule): SetRuleRequest {
  return {
    ...rewardOf(rule),
    cooldownHours: rule.cooldownHours,
    maxClaims: rule.maxClaims,
    maxTotal: rule.maxTotal,
    detectionMethod: rule.detectionMethod,
    detectionConfig: rule.detectionConfig,
    active: rule.active,
  };
}

/** What a rule pays, as the API takes it back: a fixed amount, or its rate with its minimum and cap. */
function rewardOf(rule: Rule): Pick<SetRuleRequest, 'rewardAmount' | 'rate' | 'minValue' | 'maxReward'> {
  if (!rule.rate) return { rewardAmount: rule.rewardAmount };
  return {
    rate: rule.rate,
    ...(rule.minValue === undefined ? {} : { minValue: rule.minValue }),
    ...(rule.maxReward === undefined ? {} : { maxReward: rule.maxReward }),
  };
}

/** A rule's reward as the table shows it: "123 pts", or "2 pts per $1.00 (from $5.00, at most 500 pts)". */
function rewardText(rule: Rule): string {
  if (!rule.rate) return `${formatPts(String(rule.rewardAmount))} pts`;
  const limits = [
    rule.minValue === undefined ? undefined : `from ${formatMoney(rule.minValue, rule.rate.currency)}`,
    rule.maxReward === undefined ? undefined : `at most ${formatPts(String(rule.maxReward))} pts`,
    rule.rate.rounding && rule.rate.rounding !== 'down' ? `rounded ${ROUNDING_TEXT[rule.rate.rounding]}` : undefined,
  ].filter(Boolean);
  return `${formatRate(rule.rate)}${limits.length > 0 ? ` (${limits.join(', ')})` : ''}`;
}

const ROUNDING_TEXT = { down: 'down', nearest: 'to the nearest', up: 'up' } as const;

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

export function ProgramPage() {
  const { brandId } = useBrand();
  const rules = useQuery(rulesQuery(brandId));

  if (rules.isPending) return <p className="loading">Loading the program…</p>;
  if (rules.isError) return <ErrorNote error={rules.error} onRetry={() => void rules.refetch()} />;
  return (
    <div className="stack">
      <h1>Program</h1>
      <p>
        Everything members earn: event rules, streaks, achievements, hashtag campaigns and drops. Changes apply at once.
      </p>
      <nav aria-label="Program sections" className="section-nav">
        <ul className="row">
          {PROGRAM_SECTIONS.map(([id, name]) => (
            <li key={id}>
              <a href={`#${id}`}>{name}</a>
            </li>
          ))}
        </ul>
      </nav>
      <RulesSection rules={rules.data.rules} />
      <EngagementSections />
      <CampaignsSection />
      <DropsSection />
    </div>
  );
}

/**
 * The brand's event rules: what each event earns, how often, and how the browser SDK detects it. Admins and
 * owners create and change them, pause and resume them, archive a rule made by mistake and restore it.
 */
function RulesSection({ rules }: { rules: Rule[] }) {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const brand = useQuery(brandQuery(brandId));
  const refresh = () => queryClient.invalidateQueries({ queryKey: rulesQuery(brandId).queryKey });
  const put = ({ eventType, settings }: { eventType: string; settings: SetRuleRequest }) =>
    api('PUT', `/brands/${brandId}/rules/${encodeURIComponent(eventType)}`, settings);
  const save = useMutation({ mutationFn: put, onSuccess: refresh });
  // A pause or a resume is a save of every setting with `active` turned; its refusal shows above the list.
  const pause = useMutation({ mutationFn: put, onSuccess: refresh });
  // Archive undoes a rule made by mistake (its events are refused, it leaves every active list); restore
  // brings it back paused, so it earns again only when someone resumes it.
  const archive = useMutation({
    mutationFn: ({ eventType, change }: { eventType: string; change: 'archive' | 'restore' }) =>
      request(ruleAnswerSchema, 'POST', `/brands/${brandId}/rules/${encodeURIComponent(eventType)}/${change}`),
    onSuccess: refresh,
  });

  return (
    <ListAndForm<Rule>
      headingId="rules-heading"
      heading="Event rules"
      intro={
        <>
          <p>What each event earns, how often, and how the browser SDK detects it.</p>
          {editable ? null : (
            <p className="note">
              Your role ({membership?.role ?? 'none'}) reads the program; admins and owners change it.
            </p>
          )}
        </>
      }
      newLabel={editable ? 'New rule' : undefined}
      onOpen={() => save.reset()}
      form={({ item, close }) => (
        <RuleForm
          rule={item}
          currency={brand.data?.brand.currency ?? 'USD'}
          saving={save.isPending}
          error={save.error}
          onCancel={close}
          onSave={(eventType, settings) => save.mutate({ eventType, settings }, { onSuccess: close })}
        />
      )}
      before={
        archive.isSuccess ? (
          <p role="status">
            {archive.data.rule.archivedAt
              ? `${archive.data.rule.eventType} is archived: its events earn nothing now.`
              : `${archive.data.rule.eventType} is restored, paused: resume it to earn again.`}
          </p>
        ) : null
      }
      problems={[archive.error, pause.error]}
      items={rules}
      pending={false}
      error={null}
      loadingText="Loading the rules…"
      emptyText="No event rule yet."
      tableLabel="Event rules"
      itemKey={(rule) => rule.eventType}
      head={
        <tr>
          <th scope="col">Event type</th>
          <th scope="col">Reward</th>
          <th scope="col">Cooldown</th>
          <th scope="col">Max claims</th>
          <th scope="col">Detection</th>
          <th scope="col">Status</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(rule, edit) => (
        <tr key={rule.eventId} data-event-type={rule.eventType} className={rule.archivedAt ? 'archived' : undefined}>
          <th scope="row">{rule.eventType}</th>
          <td>{rewardText(rule)}</td>
          <td>{rule.cooldownHours === 0 ? 'none' : `${rule.cooldownHours} h`}</td>
          <td>{rule.maxClaims === UNLIMITED || rule.maxClaims === 999999 ? 'unlimited' : rule.maxClaims}</td>
          <td>{rule.detectionMethod}</td>
          <td>{rule.archivedAt ? 'archived' : rule.active ? 'active' : 'paused'}</td>
          {editable && rule.archivedAt ? (
            <td className="actions">
              <button
                type="button"
                aria-label={`Restore ${rule.eventType}`}
                disabled={archive.isPending}
                onClick={() => archive.mutate({ eventType: rule.eventType, change: 'restore' })}
              >
                Restore
              </button>
            </td>
          ) : null}
          {editable && !rule.archivedAt ? (
            <td className="actions">
              <button type="button" onClick={edit} aria-label={`Edit ${rule.eventType}`}>
                Edit
              </button>
              <button
                type="button"
                aria-label={`${rule.active ? 'Pause' : 'Resume'} ${rule.eventType}`}
                disabled={pause.isPending}
                onClick={() =>
                  pause.mutate({ eventType: rule.eventType, settings: { ...settingsOf(rule), active: !rule.active } })
                }
              >
                {rule.active ? 'Pause' : 'Resume'}
              </button>
              <button
                type="button"
                className="danger"
                aria-label={`Archive ${rule.eventType}`}
                disabled={archive.isPending}
                onClick={() => {
                  if (window.confirm(`Archive ${rule.eventType}? Its events will earn nothing until restored.`)) {
                    archive.mutate({ eventType: rule.eventType, change: 'archive' });
                  }
                }}
              >
                Archive
              </button>
            </td>
          ) : null}
        </tr>
      )}
    />
  );
}

/** A new event rule, or the changes to one (every setting is sent: a rule is saved whole). */
export function RuleForm(props: {
  rule: Rule | undefined;
  /** The brand's currency: a rate is set in it (the server refuses any other). */
  currency: string;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(eventType: string, settings: SetRuleRequest): void;
}) {
  const { rule } = props;
  const [eventType, setEventType] = useState(rule?.eventType ?? '');
  const [kind, setKind] = useState<'fixed' | 'rate'>(rule?.rate ? 'rate' : 'fixed');
  const [reward, setReward] = useState(String(rule?.rate ? 100 : (rule?.rewardAmount ?? 100)));
  const [ratePts, setRatePts] = useState(String(rule?.rate?.pts ?? 1));
  const [per, setPer] = useState(rule?.rate?.per ?? '1');
  const [minValue, setMinValue] = useState(rule?.minValue ?? '');
  const [maxReward, setMaxReward] = useState(rule?.maxReward === undefined ? '' : String(rule.maxReward));
  const [rounding, setRounding] = useState<Rounding>(rule?.rate?.rounding ?? 'down');
  const [cooldown, setCooldown] = useState(String(rule?.cooldownHours ?? 24));
  const [unlimited, setUnlimited] = useState(rule ? rule.maxClaims === UNLIMITED || rule.maxClaims === 999999 : false);
  const [maxClaims, setMaxClaims] = useState(
    String(rule && rule.maxClaims > 0 && rule.maxClaims !== 999999 ? rule.maxClaims : 1),
  );
  const [detection, setDetection] = useState<(typeof DETECTION)[number]>(rule?.detectionMethod ?? 'manual');
  const [urlPatterns, setUrlPatterns] = useState((rule?.detectionConfig.urlPatterns ?? []).join('\n'));
  const [selectors, setSelectors] = useState((rule?.detectionConfig.successSelectors ?? []).join('\n'));
  const errors = fieldErrors(props.error);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const {
      rewardAmount: _fixed,
      rate: _rate,
      minValue: _min,
      maxReward: _max,
      ...kept
    } = rule ? settingsOf(rule) : {};
    props.onSave(eventType.trim(), {
      ...kept,
      ...(kind === 'fixed'
        ? { rewardAmount: Number(reward) }
        : {
            rate: { pts: Number(ratePts), per: per.trim(), currency: props.currency as Currency, rounding },
            ...(minValue.trim() === '' ? {} : { minValue: minValue.trim() }),
            ...(maxReward.trim() === '' ? {} : { maxReward: Number(maxReward) }),
          }),
      cooldownHours: Number(cooldown),
      maxClaims: unlimited ? UNLIMITED : Number(maxClaims),
      detectionMethod: detection,
      detectionConfig: {
        ...rule?.detectionConfig,
        urlPatterns: lines(urlPatterns),
        successSelectors: lines(selectors),
      },
    });
  };
  const fieldError = (name: string) =>
    errors[name] ? (
      <span className="error" id={`${name}-error`}>
        {errors[name]}
      </span>
    ) : null;
  const described = (name: string) =>
    errors[name] ? { 'aria-invalid': true as const, 'aria-describedby': `${name}-error` } : {};

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label={rule ? `Edit ${rule.eventType}` : 'New rule'}>
      <h3>{rule ? `Edit ${rule.eventType}` : 'New rule'}</h3>
      <label>
        Event type (letters, digits, underscores)
        <input
          name="eventType"
          required
          maxLength={50}
          pattern="[A-Za-z0-9_]{1,50}"
          value={eventType}
          disabled={Boolean(rule)}
          onChange={(e) => setEventType(e.target.value)}
          {...described('eventType')}
        />
        {fieldError('eventType')}
      </label>
      <fieldset>
        <legend>How it pays</legend>
        <label className="inline">
          <input type="radio" name="rewardKind" checked={kind === 'fixed'} onChange={() => setKind('fixed')} /> A fixed
          amount per event
        </label>
        <label className="inline">
          <input type="radio" name="rewardKind" checked={kind === 'rate'} onChange={() => setKind('rate')} /> A rate by
          the event's value (points per amount spent)
        </label>
      </fieldset>
      {kind === 'fixed' ? (
        <label>
          Reward (pts)
          <input
            name="rewardAmount"
            type="number"
            min={0}
            required
            value={reward}
            onChange={(e) => setReward(e.target.value)}
            {...described('rewardAmount')}
          />
          {fieldError('rewardAmount')}
        </label>
      ) : (
        <fieldset className="stack">
          <legend>Rate ({props.currency}): events send their value, e.g. an order's total</legend>
          <label>
            Points
            <input
              name="ratePts"
              type="number"
              min={1}
              required
              value={ratePts}
              onChange={(e) => setRatePts(e.target.value)}
              {...described('rate')}
            />
          </label>
          <label>
            Per amount of {props.currency} (e.g. 1 or 10.00)
            <input
              name="ratePer"
              inputMode="decimal"
              required
              value={per}
              onChange={(e) => setPer(e.target.value)}
              {...described('rate')}
            />
          </label>
          {fieldError('rate')}
          <label>
            Minimum value to earn anything ({props.currency}, optional)
            <input
              name="minValue"
              inputMode="decimal"
              value={minValue}
              onChange={(e) => setMinValue(e.target.value)}
              {...described('minValue')}
            />
            {fieldError('minValue')}
          </label>
          <label>
            Most points per event (optional)
            <input
              name="maxReward"
              type="number"
              min={1}
              value={maxReward}
              onChange={(e) => setMaxReward(e.target.value)}
              {...described('maxReward')}
            />
            {fieldError('maxReward')}
          </label>
          <label>
            Rounding of a fraction of a point
            <select name="rounding" value={rounding} onChange={(e) => setRounding(e.target.value as Rounding)}>
              <option value="down">down (the default)</option>
              <option value="nearest">to the nearest</option>
              <option value="up">up</option>
            </select>
          </label>
          <p className="note">
            {Number(ratePts) > 0 && /^\d+(\.\d+)?$/.test(per.trim())
              ? `Pays ${formatRate({ pts: Number(ratePts), per: per.trim(), currency: props.currency })} of the event's value.`
              : 'Set the points and the amount they are paid per.'}
          </p>
        </fieldset>
      )}
      <label>
        Cooldown (hours between two claims by one member)
        <input
          name="cooldownHours"
          type="number"
          min={0}
          required
          value={cooldown}
          onChange={(e) => setCooldown(e.target.value)}
          {...described('cooldownHours')}
        />
        {fieldError('cooldownHours')}
      </label>
      <LimitField
        legend="Claims per member"
        unlimitedLabel="Unlimited"
        unlimited={unlimited}
        onUnlimited={setUnlimited}
        label="Max claims"
        name="maxClaims"
        value={maxClaims}
        onChange={setMaxClaims}
        field={{ error: fieldError('maxClaims'), attributes: described('maxClaims') }}
      />
      <label>
        Detection by the browser SDK
        <select
          name="detectionMethod"
          value={detection}
          onChange={(e) => setDetection(e.target.value as (typeof DETECTION)[number])}
        >
          {DETECTION.map((method) => (
            <option key={method} value={method}>
              {method}
            </option>
          ))}
        </select>
      </label>
      <label>
        URL patterns (one per line, e.g. /thank-you or /checkout/*)
        <textarea
          name="urlPatterns"
          rows={2}
          value={urlPatterns}
          onChange={(e) => setUrlPatterns(e.target.value)}
          {...described('detectionConfig')}
        />
      </label>
      <label>
        Form success selectors (one per line, e.g. .signup-success)
        <textarea name="successSelectors" rows={2} value={selectors} onChange={(e) => setSelectors(e.target.value)} />
      </label>
      {fieldError('detectionConfig')}
      {props.error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {describeError(props.error).message}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" disabled={props.saving}>
          Save rule
        </button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
