import {
  type AchievementDefinitionView,
  achievementDefinitionsResponseSchema,
  BUILT_IN_ACHIEVEMENT_TYPES,
  setAchievementDefinitionsRequestSchema,
} from '@pts/shared/schemas/achievements';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { request } from '../../api.ts';
import { describeError, messagesByPath } from '../../errors/describe.ts';
import { ErrorNote } from '../../errors/ErrorNote.tsx';
import { achievementsQuery } from '../../queries/program.ts';
import { canEdit, useBrand } from '../../session.ts';
import { TableWrap } from '../../TableWrap.tsx';
import { FormButtons, InputField, TextAreaField } from './fields.tsx';
import { fieldMessage, numberOf, validated } from './validation.tsx';

/** What each built-in type counts, in words. */
const TYPE_TEXT: Record<(typeof BUILT_IN_ACHIEVEMENT_TYPES)[number], string> = {
  tokens_earned: 'Pts earned',
  events_claimed: 'Rewards earned',
  streak_days: 'Longest daily streak (days)',
  good_morning_count: 'Good-morning messages',
  message_count: 'Chat messages (reported by the bots)',
  voice_hours: 'Voice hours (reported by the bots)',
  level_reached: 'Chat level reached (reported by the bots)',
};
const CUSTOM = 'custom';
const typeText = (type: string) => TYPE_TEXT[type as keyof typeof TYPE_TEXT] ?? `${type} (reported by your back-end)`;

/** An id from a name: lowercase letters, digits and underscores (what the schema accepts). */
const idFrom = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);

type Definition = AchievementDefinitionView;
/** What the form edits: a new achievement, or the one at `index` of the list in force. */
type Editing = { index: number; definition: Definition } | 'new';

/**
 * The brand's achievements (Program page): read by every role; admins and owners add, edit and remove them,
 * each change replacing the list through `PUT /portal/api/brands/:brandId/achievements` — the achievement
 * service of the admin API. While the brand has none of its own, the platform's defaults are in force.
 */
export default function AchievementsSection() {
  const { brandId, membership } = useBrand();
  const queryClient = useQueryClient();
  const editable = canEdit(membership);
  const [editing, setEditing] = useState<Editing | undefined>();
  const [status, setStatus] = useState('');
  const achievements = useQuery({
    ...achievementsQuery(brandId),
  });
  const save = useMutation({
    mutationFn: (change: { definitions: Definition[]; done: string }) =>
      request(
        achievementDefinitionsResponseSchema,
        'PUT',
        `/brands/${brandId}/achievements`,
        validated(setAchievementDefinitionsRequestSchema, { definitions: change.definitions }),
      ),
    onSuccess: (answer, change) => {
      queryClient.setQueryData(achievementsQuery(brandId).queryKey, answer);
      setEditing(undefined);
      setStatus(change.done);
    },
  });
  const start = (next: Editing) => {
    save.reset();
    setStatus('');
    setEditing(next);
  };

  const data = achievements.data;
  return (
    <section aria-labelledby="achievements-heading" className="stack">
      <h2 id="achievements-heading">Achievements</h2>
      <p>
        Badges members unlock when a count reaches a threshold. Unlocks are announced with the{' '}
        <code>achievement.unlocked</code> webhook and stay unlocked if a threshold changes later.
      </p>
      {achievements.isPending ? <p className="loading">Loading the achievements…</p> : null}
      <ErrorNote error={achievements.error} onRetry={() => void achievements.refetch()} />
      {data ? (
        <>
          {data.defaults ? (
            <p className="note" data-testid="achievement-defaults">
              The platform&apos;s default achievements are in force
              {editable ? '; adding, changing or removing one makes this list the brand’s own' : ''}.
            </p>
          ) : null}
          {status ? <p role="status">{status}</p> : null}
          {editable && !editing ? (
            <div className="row">
              <button type="button" onClick={() => start('new')}>
                New achievement
              </button>
              {data.defaults ? null : (
                <button
                  type="button"
                  className="secondary"
                  disabled={save.isPending}
                  onClick={() => save.mutate({ definitions: [], done: 'The default achievements are back in force.' })}
                >
                  Restore the defaults
                </button>
              )}
            </div>
          ) : null}
          {editable && editing ? (
            <AchievementForm
              key={editing === 'new' ? 'new' : editing.definition.id}
              editing={editing}
              index={editing === 'new' ? data.definitions.length : editing.index}
              taken={data.definitions
                .filter((_, index) => editing === 'new' || index !== editing.index)
                .map((d) => d.id)}
              saving={save.isPending}
              error={save.error}
              onCancel={() => setEditing(undefined)}
              onSave={(definition) => {
                const definitions =
                  editing === 'new'
                    ? [...data.definitions, definition]
                    : data.definitions.map((d, index) => (index === editing.index ? definition : d));
                save.mutate({ definitions, done: `Saved “${definition.name}”.` });
              }}
            />
          ) : null}
          {editable && !editing && save.error ? (
            <p role="alert" className="error">
              {describeError(save.error).message}
            </p>
          ) : null}
          <TableWrap label="Achievements">
            <table>
              <caption className="visually-hidden">Achievements</caption>
              <thead>
                <tr>
                  <th scope="col">Achievement</th>
                  <th scope="col">Counts</th>
                  <th scope="col">Threshold</th>
                  <th scope="col">Description</th>
                  {editable ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {data.definitions.map((definition, index) => (
                  <tr key={definition.id} data-achievement-id={definition.id}>
                    <th scope="row">
                      {definition.name}
                      <br />
                      <code className="note">{definition.id}</code>
                    </th>
                    <td>{typeText(definition.type)}</td>
                    <td>{definition.threshold}</td>
                    <td>{definition.description}</td>
                    {editable ? (
                      <td className="actions">
                        <button
                          type="button"
                          aria-label={`Edit ${definition.name}`}
                          onClick={() => start({ index, definition })}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          aria-label={`Remove ${definition.name}`}
                          disabled={save.isPending}
                          onClick={() => {
                            setEditing(undefined);
                            save.mutate({
                              definitions: data.definitions.filter((_, other) => other !== index),
                              done:
                                data.definitions.length === 1
                                  ? `Removed “${definition.name}”; with none left, the defaults are in force.`
                                  : `Removed “${definition.name}”.`,
                            });
                          }}
                        >
                          Remove
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      ) : null}
    </section>
  );
}

function AchievementForm(props: {
  editing: Editing;
  /** The definition's index in the list sent (where the server's messages point). */
  index: number;
  /** Ids of the other definitions. */
  taken: string[];
  saving: boolean;
  error: Error | null;
  onCancel(): void;
  onSave(definition: Definition): void;
}) {
  const existing = props.editing === 'new' ? undefined : props.editing.definition;
  const builtIn = !existing || (BUILT_IN_ACHIEVEMENT_TYPES as readonly string[]).includes(existing.type);
  const [name, setName] = useState(existing?.name ?? '');
  const [id, setId] = useState(existing?.id ?? '');
  const [idTouched, setIdTouched] = useState(Boolean(existing));
  const [type, setType] = useState(builtIn ? (existing?.type ?? 'events_claimed') : CUSTOM);
  const [customType, setCustomType] = useState(builtIn ? 'custom_' : (existing?.type ?? 'custom_'));
  const [threshold, setThreshold] = useState(String(existing?.threshold ?? 10));
  const [description, setDescription] = useState(existing?.description ?? '');
  const messages = messagesByPath(props.error);
  const at = `definitions.${props.index}`;
  // The form replaces the button that opened it: its first field takes the focus (keyboard users).
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  // Duplicate ids are refused for the whole list: shown next to the id.
  const duplicate = messages.definitions && props.taken.includes(id) ? messages.definitions : undefined;
  const field = (name: string) => fieldMessage(messages, `${at}.${name}`, `achievement-${name}-error`);
  const idField = fieldMessage(duplicate ? { [`${at}.id`]: duplicate } : messages, `${at}.id`, 'achievement-id-error');
  const nameField = field('name');
  const typeField = field('type');
  const thresholdField = field('threshold');
  const descriptionField = field('description');
  const shown = [`${at}.id`, `${at}.name`, `${at}.type`, `${at}.threshold`, `${at}.description`];
  const other = props.error && !duplicate && !shown.some((path) => messages[path]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSave({
      id: id.trim(),
      name,
      type: type === CUSTOM ? customType.trim() : type,
      threshold: numberOf(threshold),
      description,
    });
  };
  const title = existing ? `Edit ${existing.name}` : 'New achievement';

  return (
    <form
      className="rule-form stack"
      onSubmit={submit}
      aria-label={existing ? 'Edit achievement' : 'New achievement'}
      noValidate
    >
      <h3>{title}</h3>
      <InputField
        label="Name (members see it)"
        ref={first}
        name="name"
        maxLength={80}
        value={name}
        onChange={(e) => {
          setName(e.target.value);
          if (!idTouched) setId(idFrom(e.target.value));
        }}
        field={nameField}
      />
      <InputField
        label="Id (lowercase letters, digits, underscores; unique in the brand)"
        name="id"
        maxLength={60}
        value={id}
        readOnly={Boolean(existing)}
        onChange={(e) => {
          setIdTouched(true);
          setId(e.target.value);
        }}
        field={idField}
      />
      <label>
        What it counts
        <select name="type" value={type} onChange={(e) => setType(e.target.value)} {...typeField.attributes}>
          {BUILT_IN_ACHIEVEMENT_TYPES.map((builtInType) => (
            <option key={builtInType} value={builtInType}>
              {TYPE_TEXT[builtInType]}
            </option>
          ))}
          <option value={CUSTOM}>A custom count your back-end reports (custom_…)</option>
        </select>
        {type === CUSTOM ? null : typeField.error}
      </label>
      {type === CUSTOM ? (
        <InputField
          label="Custom type (custom_ then lowercase letters, digits, underscores)"
          name="customType"
          maxLength={47}
          value={customType}
          onChange={(e) => setCustomType(e.target.value)}
          field={typeField}
        />
      ) : null}
      <InputField
        label="Threshold (the count that unlocks it)"
        name="threshold"
        type="number"
        inputMode="numeric"
        value={threshold}
        onChange={(e) => setThreshold(e.target.value)}
        field={thresholdField}
      />
      <TextAreaField
        label="Description"
        name="description"
        rows={2}
        maxLength={300}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        field={descriptionField}
      />
      {other ? (
        <p role="alert" className="error">
          {props.error?.message}
        </p>
      ) : null}
      <FormButtons submit="Save achievement" saving={props.saving} onCancel={props.onCancel} />
    </form>
  );
}
