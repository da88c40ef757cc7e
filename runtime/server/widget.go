package server

import (
	"net/http"
)

// widgetSettingsJSON is what the widget needs to draw itself for a merchant.
type widgetSettingsJSON struct {
	MerchantID  string `json:"merchant_id"`
	DisplayName string `json:"display_name"`
	Title       string `json:"title"`
	Greeting    string `json:"greeting"`
	Color       string `json:"color"`
	Position    string `json:"position"`
	Locale      string `json:"locale"`
	LocaleFixed bool   `json:"locale_fixed"`
}

// widgetSettings answers the widget's settings to a key of the merchant, under the same key and origin rules as
// chat, so a page the merchant did not allow learns nothing about it. It costs no store access and is not
// counted against the plan's rate: every page view asks once.
func (s *Server) widgetSettings(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	caller, err := s.authenticateKey(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	m := caller.merchant
	w.Header().Set("Cache-Control", "private, max-age=60")
	writeJSON(w, http.StatusOK, widgetSettingsJSON{
		MerchantID: m.MerchantID, DisplayName: m.DisplayName, Title: m.Widget.Title, Greeting: m.Widget.Greeting,
		Color: m.Widget.Color, Position: m.Widget.Position, Locale: m.Widget.Locale,
		LocaleFixed: m.Widget.FixedLocale,
	})
}
