import { PERK_STATUS_TEXT } from '@pts/shared/rules/perk-status';
import type { Perk, PortalPerk, UpdatePerkRequest } from '@pts/shared/schemas/perks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api.ts';
import { canEdit, useBrand } from '../session.ts';
import { TableWrap } from '../TableWrap.tsx';
import { limitText, PerkForm, windowText } from './PerkForm.tsx';

/** The brand's perks; admins and owners create new ones (a PerkNFT collection each). */
export function PerksPage() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const editable = canEdit(membership);
  const [creating, setCreating] = useState(false);
  const perks = useQuery({
    queryKey: ['perks', brandId],
    queryFn: () => api<{ perks: PortalPerk[] }>('GET', `/brands/${brandId}/perks`),
  });
  const create = useMutation({
    mutationFn: (settings: UpdatePerkRequest) => api<{ perk: Perk }>('POST', `/brands/${brandId}/perks`, settings),
    onSuccess: async ({ perk }) => {
      setCreating(false);
      await queryClient.invalidateQueries({ queryKey: ['perks', brandId] });
      navigate(`/brands/${brandId}/perks/${perk.perkId}`);
    },
  });

  if (perks.isPending) return <p className="loading">Loading the perks…</p>;
  if (perks.isError) return <p role="alert">{perks.error.message}</p>;
  return (
    <section>
      <h1>Perks</h1>
      <p>What members spend their pts on. Each perk is a collection on chain; a redemption claims one of it.</p>
      {editable ? (
        <button type="button" onClick={() => setCreating(true)}>
          New perk
        </button>
      ) : (
        <p className="note">Your role ({membership?.role ?? 'none'}) reads the perks; admins and owners change them.</p>
      )}
      {creating ? (
        <PerkForm
          perk={undefined}
          saving={create.isPending}
          error={create.error}
          onCancel={() => setCreating(false)}
          onSave={(settings) => create.mutate(settings)}
        />
      ) : null}
      {perks.data.perks.length === 0 ? (
        <p>No perks yet.</p>
      ) : (
        <TableWrap label="Perks">
          <table>
            <caption className="visually-hidden">Perks</caption>
            <thead>
              <tr>
                <th scope="col">Perk</th>
                <th scope="col">Cost</th>
                <th scope="col">Supply</th>
                <th scope="col">Per member</th>
                <th scope="col">Window</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {perks.data.perks.map((perk) => (
                <tr key={perk.perkId} data-perk-id={perk.perkId}>
                  <th scope="row">
                    <Link to={`/brands/${brandId}/perks/${perk.perkId}`}>{perk.name}</Link>
                  </th>
                  <td>{perk.cost} pts</td>
                  <td>{limitText(perk.maxSupply, null)}</td>
                  <td>{limitText(perk.maxPerUser, 0)}</td>
                  <td>{windowText(perk)}</td>
                  <td data-status={perk.status}>{PERK_STATUS_TEXT[perk.status]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
