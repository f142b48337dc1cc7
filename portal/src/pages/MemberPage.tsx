import {
  type MemberProfile,
  manualAwardResponseSchema,
  memberDeductionResponseSchema,
} from '@pts/shared/schemas/brand-members';
import { eventRefusalText } from '@pts/shared/schemas/event-refusals';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, api, request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { memberQuery } from '../queries/members.ts';
import { canEdit, useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';
import { MemberTierFacts } from './TierViews.tsx';

/** One member: wallet, what they earned and spent here, history (refusals explained), streak, achievements. */
export function MemberPage() {
  const { brandId, membership } = useBrand();
  const { userKey = '' } = useParams();
  const memberOptions = memberQuery(brandId, userKey);
  const key = memberOptions.queryKey;
  const profile = useQuery(memberOptions);

  if (profile.isPending) return <p className="loading">Loading the member…</p>;
  if (profile.isError) return <ErrorNote error={profile.error} onRetry={() => void profile.refetch()} />;
  const member = profile.data;
  return (
    <section>
      <p>
        <Link to={`/brands/${brandId}/members`}>← Find another member</Link>
      </p>
      <h1 className="member-name">{member.userKey}</h1>
      {member.blocked ? (
        <p className="error" data-testid="member-blocked">
          Blocked since {new Date(member.blocked.blockedAt).toLocaleString()} by {member.blocked.blockedBy}:{' '}
          {member.blocked.reason}. Their events are refused until unblocked.
        </p>
      ) : null}
      <dl className="facts">
        <dt>Wallet</dt>
        <dd>
          <code className="link">{member.walletAddress ?? 'none yet'}</code>
        </dd>
        <dt>Balance on chain</dt>
        <dd data-testid="balance-on-chain">{member.figures.onChain} pts</dd>
        <dt>Pending (accepted, not on chain yet)</dt>
        <dd data-testid="balance-pending">{member.figures.pending} pts</dd>
        <dt>Spendable (on chain less perks being redeemed)</dt>
        <dd data-testid="balance-spendable">{member.figures.spendable} pts</dd>
        <dt>Earned here</dt>
        <dd data-testid="earned">
          {member.figures.earned.total} pts in {member.ledger.acceptedEvents} events
          {member.figures.earned.pending > 0 ? ` (${member.figures.earned.pending} still minting)` : ''}
        </dd>
        <dt>Taken back here (reversals and deductions)</dt>
        <dd data-testid="reversed">{member.figures.earned.reversed} pts</dd>
        <dt>Owed (debt, paid first from their next rewards)</dt>
        <dd data-testid="debt">{member.debt} pts</dd>
        <dt>Spent here</dt>
        <dd>
          {member.ledger.redeemed} pts
          {member.ledger.redeeming > 0 ? ` (+${member.ledger.redeeming} being redeemed)` : ''}
        </dd>
        <dt>Daily streak</dt>
        <dd>
          {member.streak.current} days (longest {member.streak.longest}){member.streak.active ? '' : ', not running'}
        </dd>
        <MemberTierFacts brandId={brandId} userKey={userKey} />
      </dl>
      {canEdit(membership) ? <AwardForm brandId={brandId} userKey={userKey} queryKey={key} /> : null}
      {canEdit(membership) ? (
        <DeductForm
          brandId={brandId}
          userKey={userKey}
          queryKey={key}
          spendable={Math.min(
            member.figures.spendable,
            member.figures.earned.total - member.ledger.redeemed - member.ledger.redeeming,
          )}
        />
      ) : null}
      {canEdit(membership) ? (
        <BlockForm brandId={brandId} userKey={userKey} queryKey={key} blocked={member.blocked ?? null} />
      ) : null}

      <h2>Linked accounts</h2>
      <ul className="cards">
        {member.identities.map((identity) => (
          <li key={identity.identityKey}>
            <span>{identity.identityKey}</span> <span className="role">{identity.platform}</span>
            {identity.primary ? <span className="role">account</span> : null}
          </li>
        ))}
      </ul>

      <h2>Events</h2>
      {member.events.length === 0 ? (
        <p>No events.</p>
      ) : (
        <TableWrap label="Events, newest first">
          <table>
            <caption className="visually-hidden">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Reward</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {member.events.map((event) => (
                <tr key={event.eventId} data-event-id={event.eventId} data-status={event.status}>
                  <th scope="row">
                    {event.eventType}
                    {event.note ? <span className="note-text"> — {event.note}</span> : null}
                  </th>
                  <td>
                    {event.status === 'accepted' ? (
                      'earned'
                    ) : (
                      <span className="refused">
                        refused: {eventRefusalText(event.reason ?? '')} <code>{event.reason}</code>
                      </span>
                    )}
                  </td>
                  <td>
                    {event.rewardAmount} pts
                    {takenBackOf(member, event.eventId) > 0 ? (
                      <span className="note-text"> (−{takenBackOf(member, event.eventId)} reversed)</span>
                    ) : null}
                  </td>
                  <td>{new Date(event.createdAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}

      <h2>Reversals and deductions</h2>
      {member.reversals.length === 0 ? (
        <p>Nothing taken back.</p>
      ) : (
        <TableWrap label="Reversals and deductions, newest first">
          <table>
            <caption className="visually-hidden">Reversals and deductions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">What</th>
                <th scope="col">Taken back</th>
                <th scope="col">Burned / owed</th>
                <th scope="col">On chain</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {member.reversals.map((reversal) => (
                <tr key={reversal.reversalId} data-reversal-kind={reversal.kind} data-status={reversal.status}>
                  <th scope="row">
                    {reversal.kind === 'deduction' ? (
                      <>
                        deduction<span className="note-text"> — {reversal.reason}</span>{' '}
                        <span className="role">{reversal.actor}</span>
                      </>
                    ) : (
                      <>
                        reversal of {reversal.eventType} <code>{reversal.reversalId}</code>
                      </>
                    )}
                  </th>
                  <td>{reversal.requested} pts</td>
                  <td>
                    {reversal.taken === null ? 'not known yet' : `${reversal.taken} burned, ${reversal.debt} owed`}
                  </td>
                  <td>{reversal.status === 'confirmed' ? 'confirmed' : `${reversal.status} (being mined)`}</td>
                  <td>{new Date(reversal.createdAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}

      <h2>Redemptions</h2>
      {member.redemptions.length === 0 ? (
        <p>No redemptions.</p>
      ) : (
        <ul className="cards">
          {member.redemptions.map((redemption) => (
            <li key={redemption.redemptionId}>
              <Link to={`/brands/${brandId}/perks/${redemption.perkId}`}>{redemption.perkName}</Link>{' '}
              <span className="role">{redemption.status}</span> {redemption.cost} pts · {redemption.confirmationCode}
            </li>
          ))}
        </ul>
      )}

      <h2>Achievements</h2>
      <ul className="cards">
        {member.achievements.map((achievement) => (
          <li key={achievement.id}>
            <span>{achievement.name}</span>{' '}
            <span className="role">
              {achievement.unlocked ? 'unlocked' : `${achievement.progress} / ${achievement.threshold}`}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * A fresh idempotency key for one intended award (issue 33 §7). From getRandomValues, not randomUUID: the
 * portal may be served over plain http on a LAN address, where randomUUID does not exist.
 */
function newAwardKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `award-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function AwardForm(props: { brandId: string; userKey: string; queryKey: readonly string[] }) {
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState('50');
  const [reason, setReason] = useState('');
  // One key per intended award: kept while the same award is retried (a lost answer, a second click), renewed
  // when the award changes or once it was given, so a repeat never pays twice and a new award always pays.
  const [awardKey, setAwardKey] = useState(newAwardKey);
  const award = useMutation({
    mutationFn: () =>
      request(
        manualAwardResponseSchema,
        'POST',
        `/brands/${props.brandId}/loyalty-members/${encodeURIComponent(props.userKey)}/awards`,
        { amount: Number(amount), reason, idempotencyKey: awardKey },
      ),
    onSuccess: async () => {
      setReason('');
      setAwardKey(newAwardKey());
      await queryClient.invalidateQueries({ queryKey: props.queryKey });
    },
  });
  const edit = (set: (value: string) => void) => (value: string) => {
    set(value);
    setAwardKey(newAwardKey());
  };
  const errors = fieldErrors(award.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!award.isPending) award.mutate();
  };
  const described = (field: string) =>
    errors[field] ? { 'aria-invalid': true, 'aria-describedby': `award-${field}-error` } : {};
  return (
    <form className="rule-form stack narrow" onSubmit={submit} aria-label="Manual award">
      <h2>Manual award</h2>
      <label>
        Pts to give
        <input
          name="amount"
          type="number"
          min={1}
          required
          value={amount}
          onChange={(e) => edit(setAmount)(e.target.value)}
          {...described('amount')}
        />
        {errors.amount ? (
          <span className="error" id="award-amount-error">
            {errors.amount}
          </span>
        ) : null}
      </label>
      <label>
        Reason (required; kept in the audit log)
        <textarea
          name="reason"
          rows={2}
          maxLength={500}
          value={reason}
          onChange={(e) => edit(setReason)(e.target.value)}
          {...described('reason')}
        />
        {errors.reason ? (
          <span className="error" id="award-reason-error">
            {errors.reason}
          </span>
        ) : null}
      </label>
      {award.error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {award.error instanceof ApiError
            ? describeError(award.error).message
            : // No answer at all (the browser says only "Failed to fetch"): the award may have been paid; the
              // retry sends the same idempotency key, so it is paid once either way.
              'No answer came back (the connection failed), so this award may or may not have been given. Give pts again: the same award is paid once.'}
        </p>
      ) : null}
      {award.isSuccess ? <p role="status">Awarded {award.data.rewardAmount} pts.</p> : null}
      <div className="row">
        {/* aria-disabled, not disabled: a disabled button drops the keyboard focus to the page's start, so a
            person giving several awards had to find the form again after each (issue 33 §14). */}
        <button type="submit" aria-disabled={award.isPending}>
          Give pts
        </button>
      </div>
    </form>
  );
}

/** Pts the reversals of one event took back (listed beside it). */
function takenBackOf(member: MemberProfile, eventId: string): number {
  return member.reversals.filter((r) => r.eventId === eventId).reduce((sum, r) => sum + r.requested, 0);
}

function newDeductionKey(): string {
  return newAwardKey().replace(/^award-/, 'deduct-');
}

/**
 * Deduct pts by hand (issue 33 §11): a reversal of kind `deduction`, burned on chain like a refund's, audited
 * with the person. One idempotency key per intended deduction, as the award's.
 */
function DeductForm(props: { brandId: string; userKey: string; queryKey: readonly string[]; spendable: number }) {
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState('10');
  const [reason, setReason] = useState('');
  const [deductKey, setDeductKey] = useState(newDeductionKey);
  const deduct = useMutation({
    mutationFn: () =>
      request(
        memberDeductionResponseSchema,
        'POST',
        `/brands/${props.brandId}/loyalty-members/${encodeURIComponent(props.userKey)}/deductions`,
        { amount: Number(amount), reason, idempotencyKey: deductKey },
      ),
    onSuccess: async () => {
      setReason('');
      setDeductKey(newDeductionKey());
      await queryClient.invalidateQueries({ queryKey: props.queryKey });
    },
  });
  const edit = (set: (value: string) => void) => (value: string) => {
    set(value);
    setDeductKey(newDeductionKey());
  };
  const errors = fieldErrors(deduct.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!deduct.isPending) deduct.mutate();
  };
  const described = (field: string) =>
    errors[field] ? { 'aria-invalid': true, 'aria-describedby': `deduct-${field}-error` } : {};
  return (
    <form className="rule-form stack narrow" onSubmit={submit} aria-label="Deduct pts">
      <h2>Deduct pts</h2>
      <p>
        Takes back at most what the member holds now ({props.spendable} pts). Not a refund: to take back a purchase's
        reward, reverse that event.
      </p>
      <label>
        Pts to deduct
        <input
          name="deduct-amount"
          type="number"
          min={1}
          required
          value={amount}
          onChange={(e) => edit(setAmount)(e.target.value)}
          {...described('amount')}
        />
        {errors.amount ? (
          <span className="error" id="deduct-amount-error">
            {errors.amount}
          </span>
        ) : null}
      </label>
      <label>
        Reason for the deduction (required; kept in the audit log)
        <textarea
          name="deduct-reason"
          rows={2}
          maxLength={500}
          value={reason}
          onChange={(e) => edit(setReason)(e.target.value)}
          {...described('reason')}
        />
        {errors.reason ? (
          <span className="error" id="deduct-reason-error">
            {errors.reason}
          </span>
        ) : null}
      </label>
      {deduct.error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {deduct.error instanceof ApiError
            ? describeError(deduct.error).message
            : 'No answer came back (the connection failed), so these pts may or may not have been deducted. Deduct again: the same deduction is taken once.'}
        </p>
      ) : null}
      {deduct.isSuccess ? (
        <p role="status">
          Deducted {deduct.data.deduction.requested} pts
          {deduct.data.deduction.status === 'confirmed' ? '.' : ` (${deduct.data.deduction.status} on chain).`}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" className="danger" aria-disabled={deduct.isPending}>
          Deduct pts
        </button>
      </div>
    </form>
  );
}

/** Block (with the reason, kept in the audit log) or unblock: a blocked member's events are refused. */
function BlockForm(props: {
  brandId: string;
  userKey: string;
  queryKey: readonly string[];
  blocked: MemberProfile['blocked'];
}) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const path = `/brands/${props.brandId}/loyalty-members/${encodeURIComponent(props.userKey)}/block`;
  const change = useMutation({
    mutationFn: (block: boolean) => (block ? api('POST', path, { reason }) : api('DELETE', path)),
    onSuccess: async () => {
      setReason('');
      await queryClient.invalidateQueries({ queryKey: props.queryKey });
    },
  });
  const errors = fieldErrors(change.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate(!props.blocked);
  };
  return (
    <form className="rule-form stack narrow" onSubmit={submit} aria-label="Block or unblock">
      <h2>{props.blocked ? 'Unblock' : 'Block this member'}</h2>
      {props.blocked ? (
        <p>Their events earn again from now on; what was refused stays refused.</p>
      ) : (
        <label>
          Reason (required; kept in the audit log)
          <textarea
            name="block-reason"
            rows={2}
            maxLength={500}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            {...(errors.reason ? { 'aria-invalid': true, 'aria-describedby': 'block-reason-error' } : {})}
          />
          {errors.reason ? (
            <span className="error" id="block-reason-error">
              {errors.reason}
            </span>
          ) : null}
        </label>
      )}
      {change.error && Object.keys(errors).length === 0 ? (
        <p role="alert" className="error">
          {describeError(change.error).message}
        </p>
      ) : null}
      {change.isSuccess ? <p role="status">{props.blocked ? 'Blocked.' : 'Unblocked.'}</p> : null}
      <div className="row">
        <button type="submit" className={props.blocked ? undefined : 'danger'} disabled={change.isPending}>
          {props.blocked ? 'Unblock member' : 'Block member'}
        </button>
      </div>
    </form>
  );
}
