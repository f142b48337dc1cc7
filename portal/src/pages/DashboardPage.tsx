import type { AnalyticsBucket, BrandAnalytics } from '@pts/shared/schemas/analytics';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useId, useState } from 'react';
import { Link } from 'react-router';
import { type ChartSeries, TimeChart } from '../charts/TimeChart.tsx';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { formatCount, formatDecimal, formatEth, formatPts } from '../format/numbers.ts';
import { dashboardQuery } from '../queries/dashboard.ts';
import { useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';
import { TierDistributionPanel } from './TierViews.tsx';

/** The periods a brand picks from: the days ending now. */
const PERIODS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
] as const;

/** How often the open dashboard asks again, so a new event shows within seconds. */
const REFRESH_MS = 3_000;

const ACTIVITY: ChartSeries[] = [
  { key: 'acceptedEvents', label: 'Events accepted', color: '#0b57d0' },
  { key: 'refusedEvents', label: 'Events refused', color: '#b3261e', dash: true },
  { key: 'activeMembers', label: 'Active members', color: '#146c2e' },
];
/** pts issued alone: at real volume it is orders of magnitude above what is spent (issue 33 §13). */
const ISSUED: ChartSeries[] = [{ key: 'ptsIssued', label: 'pts issued', color: '#0b57d0' }];
/** What members spend, each on its own axis: pts (left) and redemptions, a count (right). */
const SPENT: ChartSeries[] = [
  { key: 'ptsSpent', label: 'pts spent (left axis)', color: '#8e4a00' },
  { key: 'redemptions', label: 'Perks redeemed (right axis)', color: '#6b3fa0', dash: true, axis: 'right' },
];

/** The brand's dashboard (docs/portal.md, "Dashboard"): the analytics read model, refreshed every few seconds. */
export function DashboardPage() {
  const { brandId } = useBrand();
  const [days, setDays] = useState<number>(30);
  const [unit, setUnit] = useState<'day' | 'week'>('day');
  const periodId = useId();
  const dashboard = useQuery({
    ...dashboardQuery(brandId, days),
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
      <ErrorNote error={dashboard.error} onRetry={() => void dashboard.refetch()} />
      {dashboard.data ? <DashboardBody data={dashboard.data} unit={unit} /> : null}
      <TierDistributionPanel brandId={brandId} />
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
          value={formatCount(data.members.total)}
          hint={`${formatCount(data.members.new)} new in the period`}
        />
        <Stat
          label="Active members"
          value={formatCount(data.members.active.day)}
          hint={`today · ${formatCount(data.members.active.week)} this week · ${formatCount(data.members.active.month)} this month`}
        />
        <Stat label="Events accepted" value={formatCount(data.events.accepted)} />
        <Stat label="Events refused" value={formatCount(data.events.refused)} />
        <Stat label="pts issued" value={formatPts(data.ptsIssued)} />
        <Stat
          label="pts taken back"
          value={formatPts(data.reversals.ptsReversed)}
          hint={`${formatCount(data.reversals.count)} reversals · ${formatPts(data.reversals.ptsDeducted)} deducted by hand`}
        />
        <Stat
          label="pts issued, net"
          value={
            data.ptsNetIssued.startsWith('-')
              ? `−${formatPts(data.ptsNetIssued.slice(1))}`
              : formatPts(data.ptsNetIssued)
          }
        />
        <Stat
          label="Perks redeemed"
          value={formatCount(data.redemptions.count)}
          hint={`${formatCount(data.redemptions.redeemers)} members redeemed`}
        />
        <Stat label="pts spent" value={formatPts(data.redemptions.ptsSpent)} />
        <Stat
          label="Token purchases"
          value={formatCount(data.tokenPurchases.count)}
          hint={`${formatDecimal(data.tokenPurchases.usdAmount)} USD · ${formatPts(data.tokenPurchases.pts)} pts`}
        />
        <Stat
          label="Relayer gas"
          value={formatEth(data.relayerGas.costEth)}
          hint={`${formatCount(data.relayerGas.transactions)} transactions`}
        />
      </dl>

      <div className="charts">
        <ChartWithTable
          title={`Activity by ${unit}`}
          buckets={buckets}
          series={ACTIVITY}
          format={(b, key) => formatCount(Number(b[key]))}
        />
        <ChartWithTable
          title={`pts issued by ${unit}`}
          buckets={buckets}
          series={ISSUED}
          format={(b) => formatPts(String(b.ptsIssued))}
        />
        <ChartWithTable
          title={`pts spent and perks redeemed by ${unit}`}
          buckets={buckets}
          series={SPENT}
          format={(b, key) => (key === 'redemptions' ? formatCount(b.redemptions) : formatPts(String(b[key])))}
        />
      </div>

      <div className="tables">
        <Table
          caption="Refused events by reason"
          head={['Reason', 'Events']}
          rows={data.events.refusedByReason.map((r) => [r.reason, formatCount(r.count)])}
          empty="No refused event in the period."
        />
        <Table
          wide
          caption="Top event types"
          head={['Event type', 'Accepted', 'Refused', 'Members', 'pts issued']}
          rows={data.topEventTypes.map((t) => [
            t.eventType,
            formatCount(t.accepted),
            formatCount(t.refused),
            formatCount(t.members),
            formatPts(t.ptsIssued),
          ])}
          empty="No event in the period."
        />
        <Table
          caption="Top perks"
          head={['Perk', 'Redemptions', 'Redeemers', 'pts spent']}
          rows={data.topPerks.map((p) => [
            p.name,
            formatCount(p.redemptions),
            formatCount(p.redeemers),
            formatPts(p.ptsSpent),
          ])}
          empty="No perk redeemed in the period."
        />
        <Table
          caption={`Leaderboard: top 10 of ${formatCount(data.leaderboard.total)} (pts earned, all time)`}
          head={['Rank', 'Member', 'pts']}
          rows={data.leaderboard.top.map((e) => [
            String(e.rank),
            // The team sees who each member is (the answer reveals identifiers to the brand); the name opens their page.
            <Link key={e.userIdentifier} to={`/brands/${data.brandId}/members/${encodeURIComponent(e.userIdentifier)}`}>
              {e.userIdentifier}
            </Link>,
            formatCount(e.value),
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
  wide = false,
}: {
  caption: string;
  head: string[];
  rows: ReactNode[][];
  empty: string;
  /** Spans the whole row of the grid: a table of many columns (all on screen at 1280 px). */
  wide?: boolean;
}) {
  return (
    <TableWrap label={caption} wide={wide}>
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
