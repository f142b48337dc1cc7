import type { Rule } from '@pts/shared/schemas/brands';
import type { ChatGroup, UpdateChatGroupRequest } from '@pts/shared/schemas/community';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../../api.ts';
import { describeError, messagesByPath } from '../../errors/describe.ts';
import { integrationsQuery } from '../../queries/integrations.ts';
import { rulesQuery } from '../../queries/program.ts';
import { useBrand } from '../../session.ts';
import { ListAndForm } from '../../ui/ListAndForm.tsx';
import { FormButtons, InputField, when } from '../program/fields.tsx';
import { fieldMessage, numberOf } from '../program/validation.tsx';

// The server's shared schema checks the input (its messages come back per field path): importing the zod
// schema here would put zod into the portal's initial script.

/**
 * The chat groups the bots set up with `/setup` (docs/portal.md, "Integrations"). Admins and owners change
 * what the bots' brand-signed `PATCH /services/chat-groups/:id` changes (name, rewards, cooldowns, switches;
 * a changed reward or cooldown is written to the brand's rule, and nothing else of that rule) and unlink a
 * group (the bots stop rewarding in it until someone runs `/setup` there again). The form says which fields
 * are brand-wide and shows the rule each one changes, as it is now.
 */
export function ChatGroupsSection({ groups, editable }: { groups: ChatGroup[]; editable: boolean }) {
  const { brandId } = useBrand();
  const queryClient = useQueryClient();
  const path = (group: ChatGroup) => `/brands/${brandId}/chat-groups/${encodeURIComponent(group.chatGroupId)}`;
  const refresh = () => queryClient.invalidateQueries({ queryKey: integrationsQuery(brandId).queryKey });
  const save = useMutation({
    mutationFn: ({ group, body }: { group: ChatGroup; body: UpdateChatGroupRequest }) =>
      api('PATCH', path(group), body),
    onSuccess: () =>
      Promise.all([refresh(), queryClient.invalidateQueries({ queryKey: rulesQuery(brandId).queryKey })]),
  });
  const unlink = useMutation({ mutationFn: (group: ChatGroup) => api('DELETE', path(group)), onSuccess: refresh });

  return (
    <ListAndForm<ChatGroup>
      className="panel"
      headingId="chat-heading"
      heading="Chat groups"
      onOpen={() => save.reset()}
      items={groups}
      pending={false}
      error={null}
      problems={[unlink.error]}
      loadingText="Loading the chat groups…"
      emptyText="No chat group yet: add the bot to your Discord, Telegram, Slack or Matrix group and run /setup there."
      tableLabel="Chat groups set up by the bots"
      itemKey={(group) => group.id}
      form={({ item, close }) =>
        item ? (
          <ChatGroupForm
            group={item}
            saving={save.isPending}
            error={save.error}
            onCancel={close}
            onSave={(body) => save.mutate({ group: item, body }, { onSuccess: close })}
          />
        ) : null
      }
      head={
        <tr>
          <th scope="col">Group</th>
          <th scope="col">Platform id</th>
          <th scope="col">Set up by</th>
          <th scope="col">Rewards</th>
          <th scope="col">State</th>
          {editable ? <th scope="col">Actions</th> : null}
        </tr>
      }
      row={(group, edit) => (
        <tr key={group.id} data-chat-group={group.chatGroupId}>
          <th scope="row">{group.groupName}</th>
          <td>{group.chatGroupId}</td>
          <td>
            {group.setupBy}, {when(group.setupAt)}
          </td>
          <td>{rewardsText(group)}</td>
          <td>{group.isActive ? 'active' : 'unlinked (run /setup in the group to link it again)'}</td>
          {editable ? (
            <td className="actions">
              {group.isActive ? (
                <>
                  <button type="button" aria-label={`Edit ${group.groupName}`} onClick={edit}>
                    Edit
                  </button>
                  <button
                    type="button"
                    className="secondary"
                    aria-label={`Unlink ${group.groupName}`}
                    disabled={unlink.isPending}
                    onClick={() => {
                      if (window.confirm(`Unlink ${group.groupName}? The bots stop rewarding in it.`)) {
                        unlink.mutate(group);
                      }
                    }}
                  >
                    Unlink
                  </button>
                </>
              ) : null}
            </td>
          ) : null}
        </tr>
      )}
    />
  );
}

const rewardsText = ({ configMetadata: c }: ChatGroup) =>
  `check-in ${c.dailyReward}, welcome ${c.welcomeBonus}` +
  (c.naturalParticipation.enabled
    ? `, good morning ${c.naturalParticipation.gmReward}, good night ${c.naturalParticipation.gnReward}`
    : ', good morning/night off');

/** The brand rule each reward and cooldown field of the form writes to (the fields are brand-wide). */
const RULE_OF_FIELD = {
  dailyReward: 'daily_checkin',
  welcomeBonus: 'welcome_bonus',
  gmReward: 'good_morning',
  gmCooldownHours: 'good_morning',
  gnReward: 'good_night',
  gnCooldownHours: 'good_night',
} as const;

const UNLIMITED_CLAIMS = [-1, 999999];

/** A rule as a person reads it: `daily_checkin: 10 pts, 20 h cooldown, at most 3 claims`. */
export function ruleSummary(eventType: string, rule: Rule | undefined): string {
  if (!rule) return `${eventType}: not set yet (saving creates it)`;
  const cooldown = rule.cooldownHours === 0 ? 'no cooldown' : `${rule.cooldownHours} h cooldown`;
  const claims = UNLIMITED_CLAIMS.includes(rule.maxClaims)
    ? 'unlimited claims'
    : `at most ${rule.maxClaims} claim${rule.maxClaims === 1 ? '' : 's'}`;
  return `${eventType}: ${rule.rewardAmount} pts, ${cooldown}, ${claims}${rule.active ? '' : ' (inactive)'}`;
}

/**
 * The changes to one chat group. It reads the brand's rules (the same query and key as the Program page's) to
 * show what each brand-wide field writes to.
 */
export function ChatGroupForm(props: {
  group: ChatGroup;
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(body: UpdateChatGroupRequest): void;
}) {
  const config = props.group.configMetadata;
  const np = config.naturalParticipation;
  const [text, setText] = useState({
    groupName: props.group.groupName,
    dailyReward: String(config.dailyReward),
    welcomeBonus: String(config.welcomeBonus),
    gmReward: String(np.gmReward),
    gmCooldownHours: String(np.gmCooldownHours),
    gnReward: String(np.gnReward),
    gnCooldownHours: String(np.gnCooldownHours),
  });
  const [switches, setSwitches] = useState({
    welcomeMessageEnabled: config.welcomeMessageEnabled,
    enabled: np.enabled,
    gmResponseEnabled: np.gmResponseEnabled,
    gnResponseEnabled: np.gnResponseEnabled,
  });
  const { brandId } = useBrand();
  const rules = useQuery(rulesQuery(brandId)).data?.rules;
  const messages = messagesByPath(props.error);
  const ruleOf = (eventType: string) => rules?.find((rule) => rule.eventType === eventType);
  const input = (name: keyof typeof text, label: string, path: string, number = true) => (
    <InputField
      label={label}
      name={name}
      {...(name in RULE_OF_FIELD ? { 'aria-describedby': 'chat-brand-wide' } : {})}
      {...(number ? { type: 'number', inputMode: 'numeric' as const, min: 0 } : { maxLength: 200 })}
      value={text[name]}
      onChange={(e) => setText((old) => ({ ...old, [name]: e.target.value }))}
      field={fieldMessage(messages, path, `chat-${name}-error`)}
    />
  );
  const toggle = (name: keyof typeof switches, label: string) => (
    <label className="inline">
      <input
        type="checkbox"
        name={name}
        checked={switches[name]}
        onChange={(e) => setSwitches((old) => ({ ...old, [name]: e.target.checked }))}
      />{' '}
      {label}
    </label>
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      groupName: text.groupName.trim(),
      configMetadata: {
        dailyReward: numberOf(text.dailyReward),
        welcomeBonus: numberOf(text.welcomeBonus),
        welcomeMessageEnabled: switches.welcomeMessageEnabled,
        naturalParticipation: {
          enabled: switches.enabled,
          gmReward: numberOf(text.gmReward),
          gmCooldownHours: numberOf(text.gmCooldownHours),
          gnReward: numberOf(text.gnReward),
          gnCooldownHours: numberOf(text.gnCooldownHours),
          gmResponseEnabled: switches.gmResponseEnabled,
          gnResponseEnabled: switches.gnResponseEnabled,
        },
      },
    });
  };
  const npPath = 'configMetadata.naturalParticipation';
  const known = Object.keys(messages).filter((path) => path !== '');
  return (
    <form className="stack narrow" onSubmit={submit} aria-label={`Edit ${props.group.groupName}`} noValidate>
      <h3>Edit {props.group.groupName}</h3>
      {input('groupName', 'Group name', 'groupName', false)}
      {input('dailyReward', 'Daily check-in reward (pts)', 'configMetadata.dailyReward')}
      {input('welcomeBonus', 'Welcome bonus for a new member (pts)', 'configMetadata.welcomeBonus')}
      {toggle('welcomeMessageEnabled', 'Welcome new members with a message')}
      <fieldset>
        <legend>Good morning / good night</legend>
        {toggle('enabled', 'Reward good-morning and good-night messages')}
        {input('gmReward', 'Good-morning reward (pts)', `${npPath}.gmReward`)}
        {input('gmCooldownHours', 'Good-morning cooldown (hours)', `${npPath}.gmCooldownHours`)}
        {input('gnReward', 'Good-night reward (pts)', `${npPath}.gnReward`)}
        {input('gnCooldownHours', 'Good-night cooldown (hours)', `${npPath}.gnCooldownHours`)}
        {toggle('gmResponseEnabled', 'The bot answers good morning')}
        {toggle('gnResponseEnabled', 'The bot answers good night')}
      </fieldset>
      <div id="chat-brand-wide" className="note" role="note" aria-label="Brand-wide rules">
        <p>
          <strong>Brand-wide:</strong> rewards and cooldowns are the brand's rules, shared by every group of the brand.
          Saving writes only the values you change here to these rules; their other settings (cooldowns, claim limits)
          stay as they are:
        </p>
        <ul>
          {[...new Set(Object.values(RULE_OF_FIELD))].map((eventType) => (
            <li key={eventType}>{rules ? ruleSummary(eventType, ruleOf(eventType)) : `${eventType}: …`}</li>
          ))}
        </ul>
      </div>
      {props.error && known.length === 0 ? (
        <p role="alert" className="error">
          {messages[''] ?? describeError(props.error).message}
        </p>
      ) : null}
      <FormButtons submit="Save group" saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}
