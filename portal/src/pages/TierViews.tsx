import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { formatCount } from '../format/numbers.ts';
import { memberTierQuery } from '../queries/members.ts';
import { tierDistributionQuery } from '../queries/program.ts';
import { TableWrap } from '../TableWrap.tsx';

/** The dashboard's VIP tiers: how many members hold each tier (docs/tiers.md, "In the portal"). */
export function TierDistributionPanel({ brandId }: { brandId: string }) {
  const distribution = useQuery(tierDistributionQuery(brandId));
  return (
    <section aria-labelledby="tier-distribution-heading" className="stack">
      <h2 id="tier-distribution-heading">Members by VIP tier</h2>
      {distribution.isPending ? <p className="loading">Loading the tiers…</p> : null}
      <ErrorNote error={distribution.error} />
      {distribution.data && distribution.data.tiers.length === 0 ? (
        <p className="note">
          No tiers yet. <Link to={`/brands/${brandId}/program`}>Set them up on the Program page.</Link>
        </p>
      ) : null}
      {distribution.data && distribution.data.tiers.length > 0 ? (
        <TableWrap label="Members by VIP tier">
          <table data-testid="tier-distribution">
            <caption>
              {formatCount(distribution.data.members)} members by tier (
              {distribution.data.basis === 'spent' ? 'value spent' : 'pts earned'})
            </caption>
            <thead>
              <tr>
                <th scope="col">Tier</th>
                <th scope="col">From</th>
                <th scope="col">Members</th>
                <th scope="col">Share</th>
              </tr>
            </thead>
            <tbody>
              {distribution.data.tiers.map((tier) => (
                <tr key={tier.name} data-tier={tier.name}>
                  <th scope="row">{tier.name}</th>
                  <td>{tier.threshold}</td>
                  <td>{formatCount(tier.members)}</td>
                  <td>
                    {distribution.data.members === 0
                      ? '–'
                      : `${Math.round((tier.members / distribution.data.members) * 100)}%`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </section>
  );
}

/** A member page's VIP tier: the tier held, the total over the period and what is left to the next tier. */
export function MemberTierFacts({ brandId, userKey }: { brandId: string; userKey: string }) {
  const tier = useQuery(memberTierQuery(brandId, userKey));
  if (tier.isPending) {
    return (
      <>
        <dt>VIP tier</dt>
        <dd className="loading">Loading…</dd>
      </>
    );
  }
  if (tier.isError) {
    return (
      <>
        <dt>VIP tier</dt>
        <dd>
          <ErrorNote error={tier.error} />
        </dd>
      </>
    );
  }
  const { data } = tier;
  if (data.tier === null) return null;
  const unit = (amount: string) => (data.progress.basis === 'spent' ? `${amount} spent` : `${amount} pts`);
  return (
    <>
      <dt>VIP tier</dt>
      <dd data-testid="member-tier">
        {data.tier} (×{data.multiplier})
        {data.progress.graceUntil ? `, kept until ${new Date(data.progress.graceUntil).toLocaleDateString()}` : ''}
      </dd>
      <dt>Toward the next tier</dt>
      <dd data-testid="member-tier-progress">
        {data.next && data.progress.remaining !== null ? (
          <>
            <progress
              max={Number(data.next.threshold)}
              value={Math.min(Number(data.progress.current), Number(data.next.threshold))}
              aria-label={`Progress to ${data.next.name}`}
            />{' '}
            {unit(data.progress.current)} of {unit(data.next.threshold)}: {unit(data.progress.remaining)} left to{' '}
            {data.next.name}
          </>
        ) : (
          <>{unit(data.progress.current)}: the top tier</>
        )}
      </dd>
    </>
  );
}
