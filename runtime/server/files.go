package server

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ingest"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// maxUploadOverhead is what an upload's body may hold besides its files' bytes: the multipart boundaries and
// part headers, and the url field.
const maxUploadOverhead = 64 << 10

// The form fields of an upload.
const (
	uploadFileField = "file"
	uploadURLField  = "url"
)

type uploadJSON struct {
	Items []knowledgeJSON `json:"items"`
}

// uploadKnowledgeFiles makes knowledge items of the files of a multipart/form-data body (runtime/chat's
// ImportFiles): each in a part named "file" with its file name, and optionally, for a single file, the address
// it is published at in a part named "url". The body is read as it comes, never past the plan's bytes of one
// import, and held in memory, not in temporary files.
func (s *Server) uploadKnowledgeFiles(w http.ResponseWriter, r *http.Request, m *tenant.Bundle) error {
	limit := m.Plan.ImportBytesLimit()
	r.Body = http.MaxBytesReader(w, r.Body, int64(limit+maxUploadOverhead))
	mr, err := r.MultipartReader()
	if err != nil {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Type must be multipart/form-data with the files in parts named %q", uploadFileField)
	}
	var files []chat.KnowledgeFile
	var fileURL string
	total := 0
	for len(files) <= chat.MaxUploadFiles {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadReadError(err, limit)
		}
		switch part.FormName() {
		case uploadFileField:
			if part.FileName() == "" {
				return newError(http.StatusUnprocessableEntity, codeValidationFailed, "a part named %q must carry a file name", uploadFileField)
			}
			body, err := io.ReadAll(io.LimitReader(part, int64(limit-total+1)))
			if err != nil {
				return uploadReadError(err, limit)
			}
			if total += len(body); total > limit {
				return uploadTooLarge(limit)
			}
			files = append(files, chat.KnowledgeFile{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Body: body})
		case uploadURLField:
			v, err := io.ReadAll(io.LimitReader(part, chat.MaxURLBytes+1))
			if err != nil {
				return uploadReadError(err, limit)
			}
			fileURL = strings.TrimSpace(string(v))
		default:
			return newError(http.StatusBadRequest, codeInvalidRequest, "unknown form field %q: send files in parts named %q and their address in %q", part.FormName(), uploadFileField, uploadURLField)
		}
	}
	if fileURL != "" {
		if len(files) != 1 {
			return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%q is the address of one file: upload that file alone with it", uploadURLField)
		}
		files[0].URL = fileURL
	}
	items, err := s.chat.ImportFiles(r.Context(), m, files)
	if err != nil {
		return uploadError(err, m)
	}
	out := uploadJSON{Items: make([]knowledgeJSON, len(items))}
	for i, k := range items {
		out.Items[i] = toKnowledgeJSON(k)
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// uploadError words the refusal of an upload for its client, naming the file at fault.
func uploadError(err error, m *tenant.Bundle) error {
	var (
		file    *chat.FileError
		limit   *chat.ImportLimitError
		ceiling *chat.ImportCeilingError
	)
	switch {
	case errors.Is(err, chat.ErrNoFiles):
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "the upload holds no files: send them in parts named %q", uploadFileField)
	case errors.As(err, &file) && errors.Is(err, ingest.ErrUnsupported):
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "%s; send PDF, DOCX, HTML, Markdown, plain text or CSV files", file.Error())
	case errors.As(err, &file) && errors.Is(err, ingest.ErrTooLarge):
		return newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "%s", file.Error())
	case errors.As(err, &file) && errors.Is(err, ingest.ErrNoText) && strings.HasSuffix(strings.ToLower(file.File), ".pdf"):
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s: the PDF has no text layer, as a scan has none; run it through text recognition (OCR) first", file.File)
	case errors.As(err, &file):
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "%s", file.Error())
	case errors.As(err, &limit) && limit.Bound == chat.ImportBoundBytes:
		return uploadTooLarge(limit.Limit)
	case errors.As(err, &limit):
		return newError(http.StatusUnprocessableEntity, codeValidationFailed, "the files make more than the %d %s one upload may hold", limit.Limit, limit.Bound)
	case errors.As(err, &ceiling) && errors.Is(err, store.ErrKnowledgeLimit):
		return explain(err, store.ErrKnowledgeLimit, "the files make %d items, more than the merchant's plan's %d knowledge items leave room for", ceiling.Items, m.Plan.KnowledgeItems)
	case errors.As(err, &ceiling):
		return explain(err, store.ErrKnowledgeSizeLimit, "the files' %d items would pass the characters the merchant's plan allows in its knowledge base", ceiling.Items)
	}
	return err
}

func uploadTooLarge(limit int) error {
	return newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "the files hold more than the %d bytes the merchant's plan allows in one upload", limit)
}

// uploadReadError answers a body that could not be read: past its bound, or not multipart as it says.
func uploadReadError(err error, limit int) error {
	if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
		return uploadTooLarge(limit)
	}
	return newError(http.StatusBadRequest, codeInvalidRequest, "the multipart body cannot be read: %v", err)
}
