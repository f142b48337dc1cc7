import type { AnalyticsBucket, BrandAnalytics } from '@pts/shared/schemas/analytics';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useId, useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { type ChartSeries, TimeChart } from '../charts/TimeChart.tsx';
import { useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';

/** The periods a brand picks from: the days ending now. */
const PERIODS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
] as const;

/** How often the open dashboard asks again, so a new event shows within seconds. */
const REFRESH_MS = 3_000;

const number = new Intl.NumberFormat('en-US');
/** Whole pts (decimal strings, exact) with thousands separators. */
const pts = (value: string) => value.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

const ACTIVITY: ChartSeries[] = [
  { key: 'acceptedEvents', label: 'Events accepted', color: '#0b57d0' },
  { key: 'refusedEvents', label: 'Events refused', color: '#b3261e', dash: true },
  { key: 'activeMembers', label: 'Active members', color: '#146c2e' },
];
const POINTS: ChartSeries[] = [
  { key: 'ptsIssued', label: 'pts issued', color: '#0b57d0' },
  { key: 'ptsSpent', label: 'pts spent', color: '#8e4a00', dash: true },
  { key: 'redemptions', label: 'Perks redeemed', color: '#6b3fa0' },
];

/** The brand's dashboard (docs/portal.md, "Dashboard"): the analytics read model, refreshed every few seconds. */
export function DashboardPage() {
  const { brandId } = useBrand();
  const [days, setDays] = useState<number>(30);
  const [unit, setUnit] = useState<'day' | 'week'>('day');
  const periodId = useId();
  const dashboard = useQuery({
    queryKey: ['dashboard', brandId, days],
    queryFn: () => api<BrandAnalytics>('GET', `/brands/${brandId}/dashboard?days=${days}`),
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });

  return (
    <section className="dashboard">
      <div className="dashboard-head">
        <h1>Dashboard</h1>
        <div className="row">
          <label className="inline" htmlFor={periodId}>
            Period
            <select id={periodId} value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {PERIODS.map((p) => (
                <option key={p.days} value={p.days}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
          <fieldset className="segmented">
            <legend className="visually-hidden">Chart buckets</legend>
            {(['day', 'week'] as const).map((u) => (
              <label key={u} className="inline">
                <input type="radio" name="unit" value={u} checked={unit === u} onChange={() => setUnit(u)} />
                By {u}
              </label>
            ))}
          </fieldset>
        </div>
      </div>
      {dashboard.isPending ? <p className="loading">Loading the dashboard…</p> : null}
      {dashboard.isError ? <p role="alert">{dashboard.error.message}</p> : null}
      {dashboard.data ? <DashboardBody data={dashboard.data} unit={unit} /> : null}
    </section>
  );
}

function DashboardBody({ data, unit }: { data: BrandAnalytics; unit: 'day' | 'week' }) {
  const buckets = data.series[unit];
  const window = `${data.window.from.slice(0, 10)} to ${data.window.to.slice(0, 10)}`;
  return (
    <>
      <p className="note">
        {window} (UTC), updated every few seconds. Members and active members count accepted events; the leaderboard is
        all-time.
      </p>
      <h2 className="visually-hidden">Key figures</h2>
      <dl className="stats" aria-label="Key figures">
        <Stat
          label="Members"
          value={number.format(data.members.total)}
          hint={`${data.members.new} new in the period`}
        />
        <Stat
          label="Active members"
          value={number.format(data.members.active.day)}
          hint={`today · ${data.members.active.week} this week · ${data.members.active.month} this month`}
        />
        <Stat label="Events accepted" value={number.format(data.events.accepted)} />
        <Stat label="Events refused" value={number.format(data.events.refused)} />
        <Stat label="pts issued" value={pts(data.ptsIssued)} />
        <Stat
          label="Perks redeemed"
          value={number.format(data.redemptions.count)}
          hint={`${data.redemptions.redeemers} members redeemed`}
        />
        <Stat label="pts spent" value={pts(data.redemptions.ptsSpent)} />
        <Stat
          label="Token purchases"
          value={number.format(data.tokenPurchases.count)}
          hint={`${data.tokenPurchases.usdAmount} USD · ${pts(data.tokenPurchases.pts)} pts`}
        />
        <Stat
          label="Relayer gas"
          value={`${data.relayerGas.costEth} ETH`}
          hint={`${data.relayerGas.transactions} transactions`}
        />
      </dl>

      <div className="charts">
        <ChartWithTable
          title={`Activity by ${unit}`}
          buckets={buckets}
          series={ACTIVITY}
          format={(b, key) => number.format(Number(b[key]))}
        />
        <ChartWithTable
          title={`pts and perks by ${unit}`}
          buckets={buckets}
          series={POINTS}
          format={(b, key) => (key === 'redemptions' ? number.format(b.redemptions) : pts(String(b[key])))}
        />
      </div>

      <div className="tables">
        <Table
          caption="Refused events by reason"
          head={['Reason', 'Events']}
          rows={data.events.refusedByReason.map((r) => [r.reason, number.format(r.count)])}
          empty="No refused event in the period."
        />
        <Table
          caption="Top event types"
          head={['Event type', 'Accepted', 'Refused', 'Members', 'pts issued']}
          rows={data.topEventTypes.map((t) => [
            t.eventType,
            number.format(t.accepted),
            number.format(t.refused),
            number.format(t.members),
            pts(t.ptsIssued),
          ])}
          empty="No event in the period."
        />
        <Table
          caption="Top perks"
          head={['Perk', 'Redemptions', 'Redeemers', 'pts spent']}
          rows={data.topPerks.map((p) => [
            p.name,
            number.format(p.redemptions),
            number.format(p.redeemers),
            pts(p.ptsSpent),
          ])}
          empty="No perk redeemed in the period."
        />
        <Table
          caption={`Leaderboard: top 10 of ${number.format(data.leaderboard.total)} (pts earned, all time)`}
          head={['Rank', 'Member', 'pts']}
          rows={data.leaderboard.top.map((e) => [
            String(e.rank),
            // The team sees who each member is (the answer reveals identifiers to the brand); the name opens their page.
            <Link key={e.userIdentifier} to={`/brands/${data.brandId}/members/${encodeURIComponent(e.userIdentifier)}`}>
              {e.userIdentifier}
            </Link>,
            number.format(e.value),
          ])}
          empty="Nobody on the leaderboard yet."
        />
      </div>
    </>
  );
}

function Stat({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>
        <span className="stat-value">{value}</span>
        {hint ? <span className="stat-hint">{hint}</span> : null}
      </dd>
    </div>
  );
}

/** A chart, and the same numbers as a table (for screen readers, keyboards and anyone who prefers it). */
function ChartWithTable({
  title,
  buckets,
  series,
  format,
}: {
  title: string;
  buckets: AnalyticsBucket[];
  series: ChartSeries[];
  format: (bucket: AnalyticsBucket, key: ChartSeries['key']) => string;
}) {
  const [asTable, setAsTable] = useState(false);
  const headingId = useId();
  return (
    <figure className="chart-card" aria-labelledby={headingId}>
      <figcaption className="chart-head">
        <h2 id={headingId}>{title}</h2>
        <button type="button" className="secondary" aria-pressed={asTable} onClick={() => setAsTable(!asTable)}>
          {asTable ? 'Show chart' : 'Show as table'}
        </button>
      </figcaption>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.key}>
            <span className={`swatch${s.dash ? ' dashed' : ''}`} ref={paint(s.color)} />
            {s.label}
          </li>
        ))}
      </ul>
      {asTable ? (
        <Table
          caption={title}
          head={['Starting', ...series.map((s) => s.label)]}
          rows={buckets.map((b) => [b.start, ...series.map((s) => format(b, s.key))])}
          empty="No data."
        />
      ) : (
        <TimeChart
          buckets={buckets}
          series={series}
          label={`${title}: ${series.map((s) => s.label).join(', ')}. Use "Show as table" for the numbers.`}
        />
      )}
    </figure>
  );
}

/** Sets a swatch's colour through the CSSOM (the CSP allows no inline style attribute). */
const paint = (color: string) => (element: HTMLElement | null) => {
  if (element) element.style.borderColor = color;
};

function Table({
  caption,
  head,
  rows,
  empty,
}: {
  caption: string;
  head: string[];
  rows: ReactNode[][];
  empty: string;
}) {
  return (
    <TableWrap label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={head.length}>{empty}</td>
            </tr>
          ) : (
            rows.map((row, index) => (
              <tr key={index}>
                <th scope="row">{row[0]}</th>
                {row.slice(1).map((cell, i) => (
                  <td key={i}>{cell}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </TableWrap>
  );
}
