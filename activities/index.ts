import type { Sequelize } from 'sequelize';
import type { AttachmentRef } from '../core/attachments';
import { domainOf } from '../core/addresses';
import type { Config } from '../core/config';
import { parseMasterKey } from '../core/secrets';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../db/blob-store';
import { findSendingRegion } from '../db/repositories/domains';
import { createAttachmentSources } from '../services/attachment-sources';
import type { EmailChannel } from './channels/email-channel';
import { createSesChannel } from './channels/ses';
import { createSesClients, type SesClients } from './channels/ses-clients';
import { createSmtpChannel } from './channels/smtp';
import { createDkimSigner } from './dkim';
import { createDomainActivities, domainActivityDeps } from './domains';
import { createEmailActivities } from './email';
import { createEmailRenderer } from './email-render';
import { createProviderEventActivities } from './provider-events';
import { createUsageActivities } from './usage';

export interface ActivityDeps {
  db: Sequelize;
  config: Config;
  /** The email provider; built from EMAIL_PROVIDER when not given. */
  emailChannel?: EmailChannel;
  blobs?: BlobStore;
}

export function emailChannelFromConfig(config: Config, db: Sequelize, sesClients: SesClients): EmailChannel {
  if (config.EMAIL_PROVIDER === 'smtp') return createSmtpChannel(config.SMTP_URL);
  return createSesChannel({
    clients: sesClients,
    // A domain's identity lives in its own region; a message whose domain is gone tries the default one.
    sendingRegion: async (email) => (await findSendingRegion(db, email.messageId, domainOf(email.from.address))) ?? config.AWS_REGION,
  });
}

/** Every activity, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const sources = createAttachmentSources({ db, blobs: deps.blobs ?? createBlobStore(blobStoreOptions(config)) });
  // One SES client per region for the process, shared by sending and domain registration; made on first use.
  const sesClients = createSesClients();
  return {
    ...createUsageActivities(db),
    ...createDomainActivities(domainActivityDeps(db, config, sesClients)),
    ...createProviderEventActivities(db),
    ...createEmailActivities({
      db,
      channel: deps.emailChannel ?? emailChannelFromConfig(config, db, sesClients),
      render: createEmailRenderer(db),
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
