-- +goose Up
-- Items stored before 11c0ad9 may hold CR line breaks, which chat.KnowledgeInput.Validate now stores as LF: their
-- export did not import back as it was and limits counted their breaks twice. Their title, content and tags (only
-- where a tag holds a CR) are rewritten as Validate does: CRLF to LF, then any CR left to LF. The URL is not:
-- Validate refuses one with a CR inside it (url.Parse), as every writer did before it. Nor are the questions:
-- they have had their white space, CR among it, folded into single spaces since they were added (00011), and the
-- stores split them at LF alone, so a CR there would be inside a question, which Validate would make a space, not
-- a line break. Nothing is trimmed: every writer trimmed these fields with strings.TrimSpace, so none starts or
-- ends with a CR and the rewrite changes only breaks inside them. The revision of each merchant whose items
-- change moves, as every knowledge write moves it, so that the replicas' indexes, those of replicas still
-- running the previous version among them, are built again from the new text; it moves first, locking
-- knowledge_state before the items as every knowledge write does, so that a write of a running replica waits
-- rather than deadlocks. updated_at stays when the merchant last changed the item.

UPDATE knowledge_state SET revision = revision + 1
WHERE merchant_id IN (SELECT merchant_id FROM knowledge
    WHERE strpos(title, E'\r') > 0 OR strpos(content, E'\r') > 0 OR strpos(array_to_string(tags, ''), E'\r') > 0);

UPDATE knowledge SET
    title = replace(replace(title, E'\r\n', E'\n'), E'\r', E'\n'),
    content = replace(replace(content, E'\r\n', E'\n'), E'\r', E'\n'),
    tags = ARRAY(SELECT replace(replace(u.tag, E'\r\n', E'\n'), E'\r', E'\n')
        FROM unnest(tags) WITH ORDINALITY AS u(tag, n) ORDER BY u.n)
WHERE strpos(title, E'\r') > 0 OR strpos(content, E'\r') > 0 OR strpos(array_to_string(tags, ''), E'\r') > 0;

-- +goose Down
-- Nothing to undo: which breaks were CRLF or CR is not kept, and no version of the runtime needs them back (LF
-- has always been a line break to it).
