-- +goose Up
-- Items stored before 11c0ad9 may hold CR line breaks, which chat.KnowledgeInput.Validate now stores as LF: their
-- export did not import back as it was and limits counted their breaks twice. Their title, content and tags (JSON
-- arrays, decoded and encoded again, only where a tag holds a CR) are rewritten as Validate does: CRLF to LF, then
-- any CR left to LF. The URL is not: Validate refuses one with a CR inside it (url.Parse), as every writer did
-- before it. Nor are the questions: they have had their white space, CR among it, folded into single spaces since
-- they were added (00011), and the stores split them at LF alone, so a CR there would be inside a question, which
-- Validate would make a space, not a line break. Nothing is trimmed: every writer trimmed these fields with
-- strings.TrimSpace, so none starts or ends with a CR and the rewrite changes only breaks inside them. The
-- revision of each merchant whose items change moves, as every knowledge write moves it, so that a runtime's
-- index built before is built again from the new text; updated_at stays when the merchant last changed the item.

INSERT INTO knowledge_revisions (merchant_id, revision)
SELECT DISTINCT merchant_id, 1 FROM knowledge
WHERE instr(title, char(13)) > 0 OR instr(content, char(13)) > 0
    OR EXISTS (SELECT 1 FROM json_each(knowledge.tags) t WHERE instr(t.value, char(13)) > 0)
ON CONFLICT (merchant_id) DO UPDATE SET revision = revision + 1;

UPDATE knowledge SET
    title = replace(replace(title, char(13, 10), char(10)), char(13), char(10)),
    content = replace(replace(content, char(13, 10), char(10)), char(13), char(10)),
    tags = CASE WHEN EXISTS (SELECT 1 FROM json_each(knowledge.tags) t WHERE instr(t.value, char(13)) > 0)
        THEN (SELECT json_group_array(replace(replace(t.value, char(13, 10), char(10)), char(13), char(10)) ORDER BY t.key)
            FROM json_each(knowledge.tags) t)
        ELSE tags END
WHERE instr(title, char(13)) > 0 OR instr(content, char(13)) > 0
    OR EXISTS (SELECT 1 FROM json_each(knowledge.tags) t WHERE instr(t.value, char(13)) > 0);

-- +goose Down
-- Nothing to undo: which breaks were CRLF or CR is not kept, and no version of the runtime needs them back (LF
-- has always been a line break to it).
