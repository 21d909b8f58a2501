/**
 * Confluent's subject name strategies, as Kafka's serializers name them: `topic` (TopicNameStrategy,
 * the default: `<topic>-value`, one schema per topic), `record` (RecordNameStrategy: the record's
 * full name, one schema per event type across topics), `topic-record` (TopicRecordNameStrategy:
 * `<topic>-<record name>`, several event types per topic).
 */
export type SubjectStrategy = 'topic' | 'record' | 'topic-record';

export const SUBJECT_STRATEGIES: readonly SubjectStrategy[] = ['topic', 'record', 'topic-record'];

export function subjectName(strategy: SubjectStrategy, topic: string, recordName: string): string {
  if (strategy === 'record') return recordName;
  if (strategy === 'topic-record') return `${topic}-${recordName}`;
  return `${topic}-value`;
}
