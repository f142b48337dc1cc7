import { PERK_STATUS_TEXT } from '@pts/shared/rules/perk-status';
import { type PortalPerk, perkResponseSchema, type UpdatePerkRequest } from '@pts/shared/schemas/perks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { request } from '../api.ts';
import { perksQuery } from '../queries/perks.ts';
import { canEdit, useBrand } from '../session.ts';
import { ListAndForm } from '../ui/ListAndForm.tsx';
import { limitText, PerkForm, windowText } from './PerkForm.tsx';

/** The brand's perks; admins and owners create new ones (a PerkNFT collection each). */
export function PerksPage() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const editable = canEdit(membership);
  const perks = useQuery(perksQuery(brandId));
  const create = useMutation({
    mutationFn: (settings: UpdatePerkRequest) =>
      request(perkResponseSchema, 'POST', `/brands/${brandId}/perks`, settings),
    onSuccess: async ({ perk }) => {
      await queryClient.invalidateQueries({ queryKey: perksQuery(brandId).queryKey });
      navigate(`/brands/${brandId}/perks/${perk.perkId}`);
    },
  });

  return (
    <ListAndForm<PortalPerk>
      level={1}
      headingId="perks-heading"
      heading="Perks"
      intro={
        <>
          <p>What members spend their pts on. Each perk is a collection on chain; a redemption claims one of it.</p>
          {editable ? null : (
            <p className="note">
              Your role ({membership?.role ?? 'none'}) reads the perks; admins and owners change them.
            </p>
          )}
        </>
      }
      newLabel={editable ? 'New perk' : undefined}
      onOpen={() => create.reset()}
      items={perks.data?.perks}
      pending={perks.isPending}
      error={perks.error}
      onRetry={() => void perks.refetch()}
      loadingText="Loading the perks…"
      emptyText="No perks yet."
      tableLabel="Perks"
      itemKey={(perk) => String(perk.perkId)}
      // A perk is changed on its own page (the row links there): the form here creates one.
      form={({ close }) => (
        <PerkForm
          perk={undefined}
          saving={create.isPending}
          error={create.error}
          onCancel={close}
          onSave={(settings) => create.mutate(settings)}
        />
      )}
      head={
        <tr>
          <th scope="col">Perk</th>
          <th scope="col">Cost</th>
          <th scope="col">Supply</th>
          <th scope="col">Per member</th>
          <th scope="col">Window</th>
          <th scope="col">Status</th>
        </tr>
      }
      row={(perk) => (
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
      )}
    />
  );
}
