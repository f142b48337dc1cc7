import type { CreatedBrand } from '@pts/shared/schemas/brands';
import { PORTAL_ROLES, type PortalRole } from '@pts/shared/schemas/portal';
import type { OperatorBrand } from '@pts/shared/schemas/portal-operator';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { request } from '../api.ts';
import { describeError, fieldErrors } from '../errors/describe.ts';
import { ErrorNote } from '../errors/ErrorNote.tsx';
import { createdBrandAnswerSchema, inviteSentAnswerSchema, operatorBrandsQuery } from '../queries/team.ts';
import { useSession } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';
import { CopyButton } from './IntegrationsPage.tsx';

const STATUS_TEXT: Record<OperatorBrand['status'], string> = {
  active: 'has an owner',
  invited: 'owner invited',
  no_owner: 'no owner yet',
};

/**
 * The platform operators' page (docs/portal.md, "Operators"): every brand with its members and team, create a
 * brand (the service of `pts brand create`), invite its first owner (the function of `pts portal invite`),
 * open a brand's pages (read-only unless the operator is in its team).
 */
export function OperatorPage() {
  const session = useSession();
  const queryClient = useQueryClient();
  const isOperator = session.data?.user?.operator === true;
  const brands = useQuery({ ...operatorBrandsQuery(), enabled: isOperator });
  const [inviteBrand, setInviteBrand] = useState('');

  if (!isOperator) {
    return (
      <section>
        <h1>Operator</h1>
        <p>This page is for the platform's operators (made with `pts portal invite --operator`).</p>
      </section>
    );
  }
  if (brands.isPending) return <p className="loading">Loading every brand…</p>;
  if (brands.isError) return <ErrorNote error={brands.error} onRetry={() => void brands.refetch()} />;
  const refresh = () => queryClient.invalidateQueries({ queryKey: operatorBrandsQuery().queryKey });
  return (
    <section>
      <h1>Operator: every brand</h1>
      <p>
        Members are the people with an accepted event at the brand (as its dashboard counts them). You read every
        brand's pages; changes belong to its team.
      </p>
      {brands.data.brands.length === 0 ? (
        <p>No brands yet: create the first one below.</p>
      ) : (
        <TableWrap label="Brands">
          <table>
            <caption className="visually-hidden">Brands</caption>
            <thead>
              <tr>
                <th scope="col">Brand</th>
                <th scope="col">Domain</th>
                <th scope="col">Members</th>
                <th scope="col">Team</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {brands.data.brands.map((brand) => (
                <tr key={brand.brandId} data-brand-id={brand.brandId}>
                  <th scope="row">
                    <Link to={`/brands/${brand.brandId}/dashboard`}>{brand.name}</Link>
                  </th>
                  <td>
                    {brand.domain}
                    {brand.verifiedDomains.length > 0 ? ` (verified: ${brand.verifiedDomains.join(', ')})` : ''}
                  </td>
                  <td>
                    {brand.members.total} ({brand.members.activeMonth} active in 30 days)
                  </td>
                  <td>
                    {brand.team.members} in the team, {brand.team.owners} owner{brand.team.owners === 1 ? '' : 's'}
                  </td>
                  <td>{STATUS_TEXT[brand.status]}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Invite owner of ${brand.name}`}
                      onClick={() => {
                        setInviteBrand(brand.brandId);
                        document.getElementById('invite-owner-email')?.focus();
                      }}
                    >
                      Invite owner
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <InviteOwnerForm brands={brands.data.brands} brandId={inviteBrand} onBrand={setInviteBrand} onInvited={refresh} />
      <CreateBrandForm
        onCreated={(brand) => {
          setInviteBrand(brand.brandId);
          return refresh();
        }}
      />
    </section>
  );
}

function CreateBrandForm(props: { onCreated: (brand: CreatedBrand) => unknown }) {
  const [name, setName] = useState('');
  const [domain, setDomain] = useState('');
  const create = useMutation({
    mutationFn: () => request(createdBrandAnswerSchema, 'POST', '/operator/brands', { name, domain }),
    onSuccess: (answer) => props.onCreated(answer.brand),
  });
  const errors = fieldErrors(create.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} className="stack narrow panel" aria-labelledby="create-brand-heading">
      <h2 id="create-brand-heading">Create a brand</h2>
      <p>It starts with the default rules; its security key and API key are shown once.</p>
      <label>
        Name
        <input
          required
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={errors.name ? 'brand-name-error' : undefined}
        />
      </label>
      {errors.name ? (
        <p id="brand-name-error" className="error">
          {errors.name}
        </p>
      ) : null}
      <label>
        Website domain
        <input
          required
          value={domain}
          placeholder="shop.example.com"
          onChange={(e) => setDomain(e.target.value)}
          aria-invalid={errors.domain ? true : undefined}
          aria-describedby={errors.domain ? 'brand-domain-error' : undefined}
        />
      </label>
      {errors.domain ? (
        <p id="brand-domain-error" className="error">
          {errors.domain}
        </p>
      ) : null}
      {create.isError && !errors.name && !errors.domain ? (
        <p role="alert" className="error">
          {describeError(create.error).message}
        </p>
      ) : null}
      <button type="submit" disabled={create.isPending}>
        Create brand
      </button>
      {create.isSuccess ? (
        <div className="shown-once" role="status">
          <h3>Created {create.data.brand.name}</h3>
          <p>
            <strong>Copy the keys now: they are shown this once.</strong> Pass them to the brand's owner, or the owner
            rotates them on the Integrations page.
          </p>
          <p className="secret">
            Brand ID: <code className="link">{create.data.brand.brandId}</code>
          </p>
          <p className="secret">
            Security key: <code className="link">{create.data.brand.securityKey}</code>{' '}
            <CopyButton text={create.data.brand.securityKey} label="Copy the security key" />
          </p>
          <p className="secret">
            API key: <code className="link">{create.data.brand.apiKey}</code>{' '}
            <CopyButton text={create.data.brand.apiKey} label="Copy the API key" />
          </p>
        </div>
      ) : null}
    </form>
  );
}

function InviteOwnerForm(props: {
  brands: OperatorBrand[];
  brandId: string;
  onBrand: (brandId: string) => void;
  onInvited: () => unknown;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<PortalRole>('owner');
  const brandId = props.brandId || props.brands[0]?.brandId || '';
  const invite = useMutation({
    mutationFn: () => request(inviteSentAnswerSchema, 'POST', `/operator/brands/${brandId}/invites`, { email, role }),
    onSuccess: () => props.onInvited(),
  });
  const errors = fieldErrors(invite.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  if (props.brands.length === 0) return null;
  return (
    <form onSubmit={submit} className="stack narrow panel" aria-labelledby="invite-owner-heading">
      <h2 id="invite-owner-heading">Invite a brand's owner</h2>
      <label>
        Brand
        <select id="invite-owner-brand" value={brandId} onChange={(e) => props.onBrand(e.target.value)}>
          {props.brands.map((brand) => (
            <option key={brand.brandId} value={brand.brandId}>
              {brand.name} ({brand.domain})
            </option>
          ))}
        </select>
      </label>
      <label>
        E-mail
        <input
          id="invite-owner-email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          aria-invalid={errors.email ? true : undefined}
        />
      </label>
      {errors.email ? <p className="error">{errors.email}</p> : null}
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as PortalRole)}>
          {PORTAL_ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {invite.isError && !errors.email ? (
        <p role="alert" className="error">
          {describeError(invite.error).message}
        </p>
      ) : null}
      <button type="submit" disabled={invite.isPending}>
        Send invite
      </button>
      {invite.isSuccess ? (
        <div role="status">
          <p>
            Invited {invite.data.email} as {invite.data.role}. The link works once, for 72 hours.
          </p>
          {invite.data.inviteUrl ? (
            <p>
              No mail server is set up: pass this link on yourself:{' '}
              <code className="link" data-testid="operator-invite-url">
                {invite.data.inviteUrl}
              </code>{' '}
              <CopyButton text={invite.data.inviteUrl} label="Copy the invite link" />
            </p>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
