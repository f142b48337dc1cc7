import type { Campaign, CreateCampaignRequest, UpdateCampaignRequest } from '@pts/shared/schemas/community';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../api.ts';
import { campaignsQuery } from '../../queries/program.ts';
import { canEdit, useBrand } from '../../session.ts';
import { ListAndForm } from '../../ui/ListAndForm.tsx';
import { FormButtons, fromLocalInput, InputField, toLocalInput, useFieldErrors, when } from './fields.tsx';

type Save = { campaignId?: string; body: CreateCampaignRequest | UpdateCampaignRequest };
/** `end`: the server ends it at its own now (the page sends no time). */
type Change = Save | { campaignId: string; end: true };

/**
 * The brand's hashtag campaigns: posts on X with the hashtag inside the window earn the reward (a fixed
 * amount, or a multiple of the post's base reward), read by the X bot on every poll. Admins and owners
 * create, change and end them; a viewer sees the list only.
 */
export function CampaignsSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const campaigns = useQuery(campaignsQuery(brandId));
  const save = useMutation({
    mutationFn: (change: Change) =>
      'end' in change
        ? api('POST', `/brands/${brandId}/campaigns/${change.campaignId}/end`)
        : change.campaignId
          ? api('PATCH', `/brands/${brandId}/campaigns/${change.campaignId}`, change.body)
          : api('POST', `/brands/${brandId}/campaigns`, change.body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: campaignsQuery(brandId).queryKey }),
  });

  return (
    <ListAndForm<Campaign>
      headingId="campaigns-heading"
      heading="Hashtag campaigns (X bot)"
      intro={
        <p>
          Posts on X that carry the hashtag inside the campaign's window earn the reward, up to the limit per member.
          The X bot reads these on every poll.
        </p>
      }
      newLabel={editable ? 'New campaign' : undefined}
      onOpen={() => save.reset()}
      items={campaigns.data?.campaigns}
      pending={campaigns.isPending}
      error={campaigns.error}
      onRetry={() => void campaigns.refetch()}
      loadingText="Loading the campaigns…"
      emptyText="No hashtag campaign yet."
      tableLabel="Hashtag campaigns"
      itemKey={(campaign) => campaign.id}
      form={({ item, close }) => (
        <CampaignForm
          campaign={item}
          saving={save.isPending}
          error={save.error}
          onCancel={close}
          onSave={(body) => save.mutate({ ...(item ? { campaignId: item.id } : {}), body }, { onSuccess: close })}
        />
      )}
      head={
        <tr>
          <th scope="col">Hashtag</th>
          <th scope="col">Reward</th>
          <th scope="col">Window</th>
          <th scope="col">Per member</th>
          <th scope="col">Status</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(campaign, edit) => {
        // The server's status, by its clock and the one window rule: never this browser's clock.
        const { status } = campaign;
        return (
          <tr key={campaign.id} data-campaign={campaign.hashtag}>
            <th scope="row">{campaign.hashtag}</th>
            <td>
              {campaign.reward !== null ? `${campaign.reward} pts` : `× ${campaign.rewardMultiplier}`}
              {campaign.excludeBrandPosts ? '' : ' (brand posts count)'}
            </td>
            <td>
              {when(campaign.startDate)} – {when(campaign.endDate)}
            </td>
            <td>{campaign.maxClaimsPerUser}</td>
            <td>{status}</td>
            {editable ? (
              <td className="actions">
                <button type="button" aria-label={`Edit ${campaign.hashtag}`} onClick={edit}>
                  Edit
                </button>
                {status === 'active' ? (
                  <button
                    type="button"
                    aria-label={`End now ${campaign.hashtag}`}
                    onClick={() => save.mutate({ campaignId: campaign.id, end: true })}
                  >
                    End now
                  </button>
                ) : null}
              </td>
            ) : null}
          </tr>
        );
      }}
    />
  );
}

function CampaignForm(props: {
  campaign: Campaign | undefined;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(body: CreateCampaignRequest | UpdateCampaignRequest): void;
}) {
  const { campaign } = props;
  const [hashtag, setHashtag] = useState(campaign?.hashtag ?? '#');
  const [kind, setKind] = useState<'fixed' | 'multiplier'>(campaign?.rewardMultiplier != null ? 'multiplier' : 'fixed');
  const [reward, setReward] = useState(String(campaign?.reward ?? 50));
  const [multiplier, setMultiplier] = useState(String(campaign?.rewardMultiplier ?? 2));
  const [startDate, setStartDate] = useState(toLocalInput(campaign?.startDate ?? new Date().toISOString()));
  const [endDate, setEndDate] = useState(
    toLocalInput(campaign?.endDate ?? new Date(Date.now() + 7 * 24 * 3600_000).toISOString()),
  );
  const [perMember, setPerMember] = useState(String(campaign?.maxClaimsPerUser ?? 1));
  const [excludeBrandPosts, setExcludeBrandPosts] = useState(campaign?.excludeBrandPosts ?? true);
  const { errors, message, field, general } = useFieldErrors(props.error, 'campaign');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const amounts =
      kind === 'fixed'
        ? { reward: Number(reward), ...(campaign ? { rewardMultiplier: null } : {}) }
        : { rewardMultiplier: Number(multiplier), ...(campaign ? { reward: null } : {}) };
    props.onSave({
      hashtag: hashtag.trim(),
      ...amounts,
      startDate: fromLocalInput(startDate) ?? '',
      endDate: fromLocalInput(endDate) ?? '',
      maxClaimsPerUser: Number(perMember),
      excludeBrandPosts,
    } as CreateCampaignRequest);
  };
  const title = campaign ? `Edit ${campaign.hashtag}` : 'New campaign';

  return (
    <form className="rule-form stack" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <InputField
        label="Hashtag (# then letters, digits or underscores)"
        name="hashtag"
        required
        maxLength={101}
        value={hashtag}
        onChange={(e) => setHashtag(e.target.value)}
        field={field('hashtag')}
      />
      <fieldset>
        <legend>Reward per counted post</legend>
        <label className="inline">
          <input type="radio" name="kind" checked={kind === 'fixed'} onChange={() => setKind('fixed')} /> A fixed amount
        </label>
        <label className="inline">
          <input type="radio" name="kind" checked={kind === 'multiplier'} onChange={() => setKind('multiplier')} /> A
          multiple of the post's base reward
        </label>
        {kind === 'fixed' ? (
          <InputField
            label="Reward (pts)"
            name="reward"
            type="number"
            min={0}
            required
            value={reward}
            onChange={(e) => setReward(e.target.value)}
            field={field('reward')}
          />
        ) : (
          <InputField
            label="Multiplier (e.g. 2 doubles the base reward)"
            name="rewardMultiplier"
            type="number"
            min={0.01}
            max={100}
            step="any"
            required
            value={multiplier}
            onChange={(e) => setMultiplier(e.target.value)}
            field={field(errors.rewardMultiplier ? 'rewardMultiplier' : 'reward')}
          />
        )}
        {kind === 'fixed' ? message('rewardMultiplier') : null}
      </fieldset>
      <fieldset>
        <legend>Window (your local time)</legend>
        <InputField
          label="Starts"
          name="startDate"
          type="datetime-local"
          required
          value={startDate}
          onChange={(e) => setStartDate(e.target.value)}
          field={field('startDate')}
        />
        <InputField
          label="Ends"
          name="endDate"
          type="datetime-local"
          required
          value={endDate}
          onChange={(e) => setEndDate(e.target.value)}
          field={field('endDate')}
        />
      </fieldset>
      <InputField
        label="Rewarded posts per member"
        name="maxClaimsPerUser"
        type="number"
        min={1}
        required
        value={perMember}
        onChange={(e) => setPerMember(e.target.value)}
        field={field('maxClaimsPerUser')}
      />
      <label className="inline">
        <input
          type="checkbox"
          name="excludeBrandPosts"
          checked={excludeBrandPosts}
          onChange={(e) => setExcludeBrandPosts(e.target.checked)}
        />{' '}
        Ignore the brand's own posts
      </label>
      {general}
      <FormButtons submit="Save campaign" saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}
