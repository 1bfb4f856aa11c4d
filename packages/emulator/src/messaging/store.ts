/**
 * The messaging area's SQLite store: direct conversations (one per tenant, user and agent), notifications delivered
 * (never part of chat history), and the chat history of each conversation (proactive messages).
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../kb/ids.js';

/** A direct conversation between a user and a digital employee. */
export interface ConversationRow {
  conversation_id: string;
  room_id: string;
  tenant_id: number;
  user_id: string;
  agent_id: string;
  created_at: number;
}

/** A delivered system notification. */
export interface NotificationRow {
  seq: number;
  notification_id: string;
  tenant_id: number;
  conversation_id: string;
  room_id: string;
  user_id: string;
  agent_id: string;
  title: string;
  description: string;
  third_notification_id: string | null;
  created_at: number;
}

/** One message of a conversation's chat history. */
export interface MessageRow {
  seq: number;
  message_id: string;
  conversation_id: string;
  tenant_id: number;
  sender_agent_id: string;
  blocks: string;
  created_at: number;
}

/** Creates the messaging tables (idempotent). */
export function migrateMessaging(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS msg_conversations (
      conversation_id TEXT PRIMARY KEY,
      room_id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      user_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      UNIQUE (tenant_id, user_id, agent_id)
    );
    CREATE TABLE IF NOT EXISTS msg_notifications (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      notification_id TEXT NOT NULL UNIQUE,
      tenant_id INTEGER NOT NULL,
      conversation_id TEXT NOT NULL,
      room_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      title TEXT NOT NULL,
      description TEXT NOT NULL,
      third_notification_id TEXT,
      created_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS msg_messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      message_id TEXT NOT NULL UNIQUE,
      conversation_id TEXT NOT NULL REFERENCES msg_conversations(conversation_id),
      tenant_id INTEGER NOT NULL,
      sender_agent_id TEXT NOT NULL,
      blocks TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS msg_messages_conversation ON msg_messages(conversation_id, seq);
  `);
}

/** Typed access to the messaging tables; statements prepared once. */
export class MessagingStore {
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    this.s = {
      insertConversation: db.prepare(`INSERT OR IGNORE INTO msg_conversations (conversation_id, room_id, tenant_id, user_id, agent_id, created_at)
        VALUES (?, ?, ?, ?, ?, ?)`),
      conversationOf: db.prepare<[number, string, string], ConversationRow>(
        'SELECT * FROM msg_conversations WHERE tenant_id = ? AND user_id = ? AND agent_id = ?',
      ),
      conversationById: db.prepare<[string], ConversationRow>('SELECT * FROM msg_conversations WHERE conversation_id = ?'),
      conversations: db.prepare<[], ConversationRow>('SELECT * FROM msg_conversations ORDER BY created_at, conversation_id'),
      insertNotification: db.prepare(`INSERT INTO msg_notifications (notification_id, tenant_id, conversation_id, room_id, user_id, agent_id, title,
        description, third_notification_id, created_at) VALUES (@notification_id, @tenant_id, @conversation_id, @room_id, @user_id, @agent_id,
        @title, @description, @third_notification_id, @created_at)`),
      notifications: db.prepare<[], NotificationRow>('SELECT * FROM msg_notifications ORDER BY seq'),
      insertMessage: db.prepare(`INSERT INTO msg_messages (message_id, conversation_id, tenant_id, sender_agent_id, blocks, created_at)
        VALUES (?, ?, ?, ?, ?, ?)`),
      messages: db.prepare<[string], MessageRow>('SELECT * FROM msg_messages WHERE conversation_id = ? ORDER BY seq'),
      messageById: db.prepare<[string], MessageRow>('SELECT * FROM msg_messages WHERE message_id = ?'),
    };
  }

  /** The direct conversation of a user and an agent, created on first use (the same one every later time). */
  directConversation(tenantId: number, userId: string, agentId: string): ConversationRow {
    return this.db.transaction(() => {
      const found = this.s.conversationOf.get(tenantId, userId, agentId);
      if (found) return found;
      this.s.insertConversation.run(randomUUID(), randomUUID(), tenantId, userId, agentId, this.clock.now());
      return this.s.conversationOf.get(tenantId, userId, agentId)!;
    })();
  }

  conversationById(id: string): ConversationRow | undefined {
    return this.s.conversationById.get(id);
  }

  conversations(): ConversationRow[] {
    return this.s.conversations.all();
  }

  /** Records a delivered notification. */
  addNotification(row: Omit<NotificationRow, 'seq'>): void {
    this.s.insertNotification.run(row);
  }

  notifications(): NotificationRow[] {
    return this.s.notifications.all();
  }

  /** Appends a message to a conversation's chat history. */
  addMessage(conversationId: string, tenantId: number, agentId: string, blocks: unknown[]): MessageRow {
    const id = randomUUID();
    this.s.insertMessage.run(id, conversationId, tenantId, agentId, JSON.stringify(blocks), this.clock.now());
    return this.s.messageById.get(id)!;
  }

  messages(conversationId: string): MessageRow[] {
    return this.s.messages.all(conversationId);
  }
}

/** The wire form of a history message (admin route). */
export function messageJson(m: MessageRow): Record<string, unknown> {
  return { message_id: m.message_id, conversation_id: m.conversation_id, sender: { type: 'agent', agent_id: m.sender_agent_id }, blocks: JSON.parse(m.blocks) as unknown, created_at: isoTime(m.created_at) };
}
