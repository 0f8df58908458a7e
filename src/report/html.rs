use super::model::Report;
pub fn render_html(_report: &Report) -> String {
    String::new()
}
