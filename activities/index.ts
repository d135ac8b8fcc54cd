import type { Sequelize } from 'sequelize';
import type { AttachmentRef } from '../core/attachments';
import type { Config } from '../core/config';
import { parseMasterKey } from '../core/secrets';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../db/blob-store';
import { createAttachmentSources } from '../services/attachment-sources';
import { createTemplateRenderer, type TemplateRenderer, templateRendererOptions } from '../services/template-renderer';
import type { EmailChannel } from './channels/email-channel';
import { createSesChannel } from './channels/ses';
import { createSmtpChannel } from './channels/smtp';
import { createDkimSigner } from './dkim';
import { createDomainActivities, domainActivityDeps } from './domains';
import { createEmailActivities } from './email';
import { createEmailRenderer } from './email-render';
import { createUsageActivities } from './usage';

export interface ActivityDeps {
  db: Sequelize;
  config: Config;
  /** The email provider; built from EMAIL_PROVIDER when not given. */
  emailChannel?: EmailChannel;
  blobs?: BlobStore;
  /** Where templates render; built from the config when not given (its threads start on first use). */
  templateRenderer?: TemplateRenderer;
}

export function emailChannelFromConfig(config: Config): EmailChannel {
  return config.EMAIL_PROVIDER === 'ses' ? createSesChannel() : createSmtpChannel(config.SMTP_URL);
}

/** Every activity, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const sources = createAttachmentSources({ db, blobs: deps.blobs ?? createBlobStore(blobStoreOptions(config)) });
  return {
    ...createUsageActivities(db),
    ...createDomainActivities(domainActivityDeps(db, config)),
    ...createEmailActivities({
      db,
      channel: deps.emailChannel ?? emailChannelFromConfig(config),
      render: createEmailRenderer(db, deps.templateRenderer ?? createTemplateRenderer(templateRendererOptions(config))),
      sign: createDkimSigner(db, parseMasterKey(config.MASTER_KEY)),
      // An attachment deleted after the send was accepted is left out, not a failure (the spec's state table).
      loadAttachments: async (message) => {
        const refs = (message.content.attachments as AttachmentRef[] | undefined) ?? [];
        if (refs.length === 0) return { attachments: [], missing: [] };
        const { attachments, missing } = await sources.load(message.workspaceId, refs);
        return { attachments: attachments.map(({ filename, contentType, content, contentId }) => ({ filename, contentType, content, contentId })), missing };
      },
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
