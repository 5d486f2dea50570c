package content

import "github.com/gatehouse-dev/gatehouse/internal/content/pdftext"

// convertPDF is a PDF's text as a Document of KindPDF (pdftext.Convert:
// page markers, the /Title, Facts.Pages; its errors as they are).
func convertPDF(body []byte) (Document, error) {
	t, err := pdftext.Convert(body)
	if err != nil {
		return Document{}, err
	}
	return Document{Title: t.Title, Markdown: t.Markdown, Kind: KindPDF, Facts: Facts{Pages: t.Pages}}, nil
}

// UsePDFSubprocess makes Convert read every PDF in a child process running
// exe (normally os.Executable()), which must call ServePDFSubprocessIfAsked
// first thing in main; exe "" reads in process again. See
// pdftext.UseSubprocess for the limits and where they apply.
func UsePDFSubprocess(exe string) { pdftext.UseSubprocess(exe) }

// ServePDFSubprocessIfAsked returns at once unless this process was started
// to read one PDF for UsePDFSubprocess; then it reads it and exits (see
// pdftext.ServeSubprocessIfAsked).
func ServePDFSubprocessIfAsked() { pdftext.ServeSubprocessIfAsked() }
